/**
 * `deno task admin backup FILE` / `restore FILE` (issue 14.6): every entry of the store that
 * must survive, as JSON Lines, one `{key, value, expire_at?}` per entry, typed so that KV's
 * Uint8Array, bigint and Date values come back as they were. It is generic over the key layout
 * (metering/kv_layout.ts), so keys added later are backed up without a change here; only
 * the result cache and the counting windows, which refill themselves, are left out. It is also
 * how a deployment moves from a KV file to Deno Deploy's KV or a KV Connect server: back up from
 * one KV_PATH, restore to the other.
 *
 * Entries written with expireIn (sessions, mailed tokens, sign-in devices) carry their own
 * `expires_at`; they are restored with the life they have left, and not at all once it is over.
 *
 * Consistency: Deno KV has no snapshot read across a listing. A store in a local file is copied
 * first with SQLite's own online backup, which reads it in one transaction however busy the
 * service is, and the copy is listed; comparing two listings instead failed for good under steady
 * writes (one signed-in user saving a form 50 times a second was enough). A remote store (Deno
 * Deploy, KV Connect) is still listed twice and the versionstamps compared; if anything changed in
 * between it lists again (up to 5 times) and otherwise refuses.
 *
 * Neither direction holds the store in memory: the whole backup built as one string failed past
 * V8's 512 MiB string limit (1.55 million price-history points, a 673 MB store: `Invalid string
 * length` after 28 s and 2.3 GB, nothing written), and restore held the file, every decoded entry
 * and a scratch copy of the store (2.3 GB for 1.5 million). Backup lists the store once for the
 * header's count and again to write, in chunks of about a MiB; restore reads the file twice, once
 * to check all of it and once to write it, and keeps only a 16-byte digest of each key between
 * (DigestSet).
 *
 * The target: a file that exists is replaced only with `--force`, and never the store's own file
 * or its -wal / -shm / -journal companions (a backup written over the live store destroyed it).
 */
import { afterLocked, LOCKED_TRIES } from "../core/lock_backoff.ts";
import { backup as sqliteBackup, DatabaseSync } from "node:sqlite";
import { sha256 } from "@noble/hashes/sha2.js";
import { KV } from "../metering/kv_layout.ts";
import { AHEAD_MS, broughtToNow } from "../metering/account_record.ts";
import { ACCOUNT, entryProblem, KEY_HASH, KeyIndexCheck } from "./backup_entries.ts";
import type { AccountState } from "../metering/account_state.ts";
import { bytesHex, sha256Words } from "../metering/sha256.ts";
import { isStoreFile, pathExists, removeKvFiles, removeKvFilesSync } from "../core/kv_files.ts";
import { markRestoreFinished, markRestoreStarted } from "../metering/unfinished_restore.ts";
import { randomHex } from "../metering/api_key.ts";
import { holdsNothing } from "../metering/store_layout.ts";

/** Prefixes that are not state: a restored deployment rebuilds them on its own. */
const DISPOSABLE = [
  KV.resultCache("", "")[0],
  KV.signinAttempts("")[0],
  KV.accountMails("")[0],
  KV.alertAddressMails("")[0],
  KV.clientMails("")[0],
  KV.clientSignins("")[0],
  KV.clientSignups("")[0],
  KV.deviceSignins("")[0],
  KV.sessionPasswordChecks("")[0],
  KV.deviceGrants("")[0],
  KV.instance("")[0],
  KV.storeLayout[0],
];
/**
 * Prefixes whose entries are written with expireIn and carry their `expires_at` in the value: one
 * without it (written by an earlier version) is left out, since restored it would never expire
 * (probe FR: a sign-in device, known for 90 days, was known for good after a restore).
 */
const EXPIRING = [KV.signinDevice("")[0]];

/**
 * Whether an entry is state a restored deployment needs. A backup leaves the others out, and
 * restore skips them in backups of earlier versions, which kept some of the windows.
 */
function kept(key: Deno.KvKey, value: unknown): boolean {
  if (DISPOSABLE.includes(key[0] as string)) return false;
  return !EXPIRING.includes(key[0] as string) || typeof expiresAtOf(value) === "number";
}

function expiresAtOf(value: unknown): unknown {
  return (value as { expires_at?: unknown } | null)?.expires_at;
}
/**
 * The layout a backup is written in. 2: key id entries hold { account_id, hash } and sign-in
 * devices their expires_at. Versions that wrote 1 restored a backup of 2 without a word, and the
 * restored store then had keys they could not revoke and webhook events they never sent (probe
 * GE); they refuse 2, as this version refuses layouts newer than it knows.
 */
const LAYOUT = 2;
const FORMAT = `shelf-backup/${LAYOUT}`;
/** Layouts this version restores: every earlier one is read as it is (see kv_layout.ts). */
const RESTORES = Array.from({ length: LAYOUT }, (_, i) => `shelf-backup/${i + 1}`);
/**
 * Bytes read from a backup at a time, and about the UTF-16 units gathered before one write to it:
 * few system calls, and little memory whatever the size of the store.
 */
const CHUNK = 1 << 20;
/** Entries in one commit of restore: every KV backend takes ten checks in one atomic operation. */
const BATCH = 10;

type Encoded =
  | { t: "json"; v: unknown }
  | { t: "bytes"; v: string }
  | { t: "bigint"; v: string }
  | { t: "date"; v: string }
  | { t: "u64"; v: string };

function encodeValue(v: unknown): Encoded {
  if (v instanceof Uint8Array) return { t: "bytes", v: btoa(String.fromCharCode(...v)) };
  if (typeof v === "bigint") return { t: "bigint", v: v.toString() };
  if (v instanceof Date) return { t: "date", v: v.toISOString() };
  if (v instanceof Deno.KvU64) return { t: "u64", v: v.value.toString() };
  return { t: "json", v };
}

function decodeValue(e: Encoded): unknown {
  switch (e.t) {
    case "bytes":
      return Uint8Array.from(atob(e.v), (c) => c.charCodeAt(0));
    case "bigint":
      return BigInt(e.v);
    case "date":
      return new Date(e.v);
    case "u64":
      return new Deno.KvU64(BigInt(e.v));
    default:
      return e.v;
  }
}

type KeyPart = { s: string } | { n: number } | { b: string } | { i: string } | { t: boolean };

function encodeKey(key: Deno.KvKey): KeyPart[] {
  return key.map((p) => {
    if (typeof p === "string") return { s: p };
    if (typeof p === "number") return { n: p };
    if (typeof p === "bigint") return { i: p.toString() };
    if (typeof p === "boolean") return { t: p };
    return { b: btoa(String.fromCharCode(...(p as Uint8Array))) };
  });
}

const encoder = new TextEncoder();

/** A backup being written: lines gathered into a string of about CHUNK units, written whole. */
class ChunkedWriter {
  #text = "";
  constructor(private readonly file: Deno.FsFile) {}

  async line(text: string): Promise<void> {
    this.#text += text + "\n";
    if (this.#text.length >= CHUNK) await this.flush();
  }

  async flush(): Promise<void> {
    const bytes = encoder.encode(this.#text);
    this.#text = "";
    // A write may take less than it was given.
    for (let n = 0; n < bytes.length;) n += await this.file.write(bytes.subarray(n));
  }
}

/**
 * One listing of the entries to back up: how many, and with `digest` a digest of their keys and
 * versionstamps in order, which two listings share only if nothing changed in between (the
 * entries are not kept to compare). With `out`, each entry is also written to it as a line.
 */
async function listing(
  kv: Deno.Kv,
  opts: { digest?: boolean; out?: ChunkedWriter } = {},
): Promise<{ count: number; digest: string }> {
  const hasher = opts.digest ? sha256.create() : undefined;
  let hashed = "";
  let count = 0;
  for await (const e of kv.list({ prefix: [] })) {
    if (!kept(e.key, e.value)) continue;
    count++;
    if (!hasher && !opts.out) continue;
    const key = JSON.stringify(encodeKey(e.key));
    if (hasher) {
      // The key's JSON ends where its brackets balance, so no two entries read the same.
      hashed += `${key} ${e.versionstamp}\n`;
      if (hashed.length >= CHUNK) {
        hasher.update(encoder.encode(hashed));
        hashed = "";
      }
    }
    // What JSON.stringify({key, value}) writes, without encoding the key a second time.
    await opts.out?.line(`{"key":${key},"value":${JSON.stringify(encodeValue(e.value))}}`);
  }
  if (hasher) hasher.update(encoder.encode(hashed));
  return { count, digest: hasher ? bytesHex(hasher.digest()) : "" };
}

/**
 * Writes to `path` (from its start) the header saying `count` entries, then every entry `kv`
 * lists now; returns that listing, which says whether there were `count`.
 */
async function writtenTo(
  path: string,
  kv: Deno.Kv,
  count: number,
  createdAt: string,
  digest: boolean,
): Promise<{ count: number; digest: string }> {
  using file = await Deno.open(path, { write: true, truncate: true });
  const out = new ChunkedWriter(file);
  await out.line(JSON.stringify({ format: FORMAT, created_at: createdAt, entries: count }));
  const listed = await listing(kv, { digest, out });
  await out.flush();
  return listed;
}

/**
 * A remote store at one moment, written to `path`: each listing is compared with the one before
 * it, and the one that agrees is the file's (it writes as it lists, under the count of the one
 * before); after 5 that did not agree, an error.
 */
async function fromListings(kv: Deno.Kv, path: string, createdAt: string): Promise<number> {
  let before = await listing(kv, { digest: true });
  for (let round = 0; round < 5; round++) {
    const after = await writtenTo(path, kv, before.count, createdAt, true);
    if (after.count === before.count && after.digest === before.digest) return after.count;
    before = after;
  }
  throw new Error(
    "Cannot back up: the store kept changing while it was read; retry when it is quieter",
  );
}

/** Temporary files to remove if the process is told to stop (SIGINT, SIGTERM). */
const temps = new Set<string>();
const SIGNALS: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
// One listener for all of them: with one per file, the first to run exited before the next
// removed its file (the backup's and the snapshot copy's are made one inside the other).
function stopped() {
  for (const path of temps) removeKvFilesSync(path);
  Deno.exit(130);
}

/**
 * Runs `work` on a new file in `dir` whose name nobody can guess (created exclusively, readable
 * by the owner only), then removes what is left of it and its SQLite side files, also when the
 * process is told to stop (SIGINT, SIGTERM). A SIGKILL leaves it: a `.shelf-*` file beside FILE.
 */
async function withTempFile<T>(
  dir: string,
  prefix: string,
  work: (path: string) => Promise<T>,
): Promise<T> {
  // Named and listened for before the file exists, and forgotten only once it is gone: a signal
  // between making the file and listening, or between forgetting and removing it, left it behind
  // (probe IH; the runtime's default for SIGINT ends the process at once).
  const path = `${dir.endsWith("/") ? dir : `${dir}/`}${prefix}${randomHex(16)}`;
  if (temps.size === 0) { for (const s of SIGNALS) Deno.addSignalListener(s, stopped); }
  temps.add(path);
  try {
    // Exclusive and owner-only, as Deno.makeTempFile makes it; the folder named: the runtime's
    // own error named only the file (probe EZ).
    await Deno.open(path, { createNew: true, write: true, mode: 0o600 }).then(
      (f) => f.close(),
      (e) => {
        temps.delete(path); // not ours to remove
        throw new Error(`Cannot back up: cannot write in ${dir}: ${(e as Error).name}`);
      },
    );
    return await work(path);
  } finally {
    if (temps.has(path)) await removeKvFiles(path);
    temps.delete(path);
    if (temps.size === 0) { for (const s of SIGNALS) Deno.removeSignalListener(s, stopped); }
  }
}

/**
 * The store in the SQLite file `kvFile` at one moment, written to `path`: from a copy taken in
 * one transaction, listed once to count and once to write.
 */
function fromCopy(kvFile: string, dir: string, path: string, createdAt: string): Promise<number> {
  return withTempFile(dir, ".shelf-snapshot-", async (copy) => {
    const db = new DatabaseSync(kvFile);
    try {
      db.exec("PRAGMA busy_timeout = 10000");
      // All pages in one step: one read transaction, so one state of the store.
      await sqliteBackup(db, copy, { rate: 2 ** 30 });
    } finally {
      db.close();
    }
    const snapshot = await Deno.openKv(copy);
    try {
      // Nothing else has the copy open, so the second listing is the first: no digest needed.
      const { count } = await listing(snapshot);
      const written = await writtenTo(path, snapshot, count, createdAt, false);
      if (written.count !== count) {
        throw new Error(
          `Cannot back up: the snapshot listed ${count} entries, then ${written.count}`,
        );
      }
      return count;
    } finally {
      snapshot.close();
    }
  });
}

async function checkTarget(file: string, kvFile: string | undefined, force: boolean) {
  if (kvFile && isStoreFile(file, kvFile)) {
    throw new Error(`Cannot back up into ${file}: it is the store itself (KV_PATH)`);
  }
  const exists = await pathExists(file);
  if (exists && !force) {
    throw new Error(
      `Cannot back up: ${file} exists; name a new file, or add --force to replace it`,
    );
  }
}

/**
 * Writes the snapshot; returns the number of entries. `kvFile` is the store's SQLite file when it
 * is one (KV_PATH of a local store), `force` allows replacing an existing file.
 */
export async function backup(
  kv: Deno.Kv,
  file: string,
  opts: { now?: number; kvFile?: string; force?: boolean } = {},
): Promise<number> {
  await checkTarget(file, opts.kvFile, opts.force ?? false);
  const slash = file.lastIndexOf("/");
  const dir = slash < 0 ? "." : file.slice(0, slash) || "/";
  const createdAt = new Date(opts.now ?? Date.now()).toISOString();
  // Made new under a name nobody can guess (a planted `FILE.partial` symlink to the store was
  // written through), and the owner's alone, like the store: it holds webhook secrets and key
  // and password digests. FILE appears only once it is whole.
  return await withTempFile(dir, ".shelf-backup-", async (tmp) => {
    const count = opts.kvFile
      ? await fromCopy(opts.kvFile, dir, tmp, createdAt)
      : await fromListings(kv, tmp, createdAt);
    await Deno.rename(tmp, file);
    return count;
  });
}

/** One line of a backup, checked and decoded: what restore writes. */
interface Decoded {
  line: number;
  key: Deno.KvKey;
  value: unknown;
  /** The life left of an entry that carries `expires_at`; 0 or less: over, not restored. */
  expireIn?: number;
}

/** A backup line that cannot be restored: its line number (1 is the header) and why. */
class LineError extends Error {
  constructor(readonly line: number, why: string) {
    super(`line ${line}: ${why}`);
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const INTEGER = /^-?[0-9]+$/;
/**
 * Longer than any line backup writes (KV takes keys to 2 KiB and values to 64 KiB, under a MiB
 * as a line however escaped): a file without line ends is refused here instead of being read
 * into one string.
 */
const MAX_LINE = 16 << 20;

function firstLine(e: unknown): string {
  return (e as Error).message.split("\n")[0];
}

function checkedKey(raw: unknown, line: number): Deno.KvKey {
  if (!Array.isArray(raw)) throw new LineError(line, "key is not a list of key parts");
  if (raw.length === 0) throw new LineError(line, "key is empty");
  return raw.map((p: unknown, i) => {
    const bad = (why: string) => new LineError(line, `key part ${i + 1}: ${why}`);
    if (typeof p !== "object" || p === null || Object.keys(p).length !== 1) {
      throw bad("not one of {s}, {n}, {i}, {t}, {b}");
    }
    const [[kind, v]] = Object.entries(p);
    if (kind === "s" && typeof v === "string") return v;
    if (kind === "n" && typeof v === "number") return v;
    if (kind === "i" && typeof v === "string" && INTEGER.test(v)) return BigInt(v);
    if (kind === "t" && typeof v === "boolean") return v;
    if (kind === "b" && typeof v === "string" && BASE64.test(v)) {
      try {
        return decodeValue({ t: "bytes", v }) as Uint8Array;
      } catch { /* below */ }
    }
    throw bad(`not a valid {${kind}} part`);
  });
}

function checkedValue(raw: unknown, line: number): unknown {
  const bad = (why: string) => new LineError(line, `value: ${why}`);
  if (typeof raw !== "object" || raw === null || !("t" in raw) || !("v" in raw)) {
    throw bad("not a typed value {t, v}");
  }
  const e = raw as Encoded;
  const v: unknown = e.v;
  switch (e.t) {
    case "json":
      return v;
    case "bytes":
      if (typeof v !== "string" || !BASE64.test(v)) throw bad("bytes that are not base64");
      try {
        return decodeValue(e);
      } catch {
        throw bad("bytes that are not base64");
      }
    case "bigint":
      if (typeof v !== "string" || !INTEGER.test(v)) throw bad("a bigint that is not an integer");
      return decodeValue(e);
    case "date": {
      const d = typeof v === "string" ? new Date(v) : null;
      if (!d || Number.isNaN(d.getTime())) throw bad("a date that is not a date");
      return d;
    }
    case "u64":
      if (typeof v !== "string" || !/^[0-9]+$/.test(v) || BigInt(v) >= 2n ** 64n) {
        throw bad("a u64 that is not an integer from 0 to 2^64-1");
      }
      return decodeValue(e);
    default:
      throw bad(`unknown type ${JSON.stringify((raw as { t: unknown }).t)}`);
  }
}

/** Line `line` of a backup (not the header, not blank) checked and decoded. */
function decoded(text: string, line: number, now: number): Decoded {
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch (e) {
    throw new LineError(line, `not JSON (${firstLine(e)})`);
  }
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw new LineError(line, "not an entry {key, value}");
  }
  const { key: rawKey, value: rawValue } = entry as { key?: unknown; value?: unknown };
  const key = checkedKey(rawKey, line);
  let value = checkedValue(rawValue, line);
  const problem = entryProblem(key, value);
  if (problem) throw new LineError(line, problem);
  if (key[0] === ACCOUNT) value = broughtToNow(value as AccountState, now);
  const far = farTime(value, now);
  if (far) throw new LineError(line, `${far}: not a time from 1970 to a year from now`);
  const expiresAt = expiresAtOf(value);
  // An entry not kept is checked like any other, then not written, as one whose life is over.
  const expireIn = !kept(key, value)
    ? 0
    : typeof expiresAt === "number"
    ? expiresAt - now
    : undefined;
  return { line, key, value, expireIn };
}

/**
 * The path of a time in `value` (a field named `at` or `…_at`, at any depth) that no version wrote:
 * before 1970, more than a year ahead (the longest life an entry is given is 90 days), or not a
 * time at all. Account records are also checked field by field (account_record.ts); a watch or an
 * alert restored with a time of 1e16 made the watch list and the usage page answer 503 for good
 * (probe GI), and so did one of `{"t":1}` (probe GL). Epoch milliseconds or ISO text, as the code
 * writes them, but an expiry only as milliseconds: as text it never came (probe GL).
 */
function farTime(value: unknown, now: number, depth = 0): string | null {
  if (typeof value !== "object" || value === null) return null;
  // Deeper than any entry the code writes: refused rather than searched no further.
  if (depth > MAX_DEPTH) return "(nested too deep)";
  for (const [name, field] of Object.entries(value)) {
    if (TIME_FIELD.test(name)) {
      if (field === null || field === undefined) continue;
      const t = typeof field === "number"
        ? field
        : typeof field === "string" && name !== "expires_at"
        ? Date.parse(field)
        : NaN;
      if (!(t >= 0 && t <= now + AHEAD_MS)) return name;
    } else {
      const inner = farTime(field, now, depth + 1);
      if (inner) return `${name}.${inner}`;
    }
  }
  return null;
}
const TIME_FIELD = /(?:^|_)at$/;
const MAX_DEPTH = 8;

/** The count the header line `text` gives, or why `file` is no backup. */
function headerCount(text: string, file: string): number {
  if (!text.trim()) throw new Error(`${file} is not a Shelf backup (${FORMAT}): it is empty`);
  let header: { format?: unknown; entries?: unknown } | null;
  try {
    header = JSON.parse(text);
  } catch {
    header = null;
  }
  if (
    typeof header !== "object" || header === null || !RESTORES.includes(header.format as string)
  ) {
    const layout = /^shelf-backup\/(\d{1,9})$/.exec(String(header?.format ?? ""))?.[1];
    if (layout && Number(layout) > LAYOUT) {
      throw new Error(
        `${file} was written by a newer version of Shelf (layout shelf-backup/${layout}); this version restores ${
          RESTORES.join(" and ")
        }: restore it with that version or a later one`,
      );
    }
    throw new Error(`${file} is not a Shelf backup (${FORMAT})`);
  }
  if (!Number.isSafeInteger(header.entries) || (header.entries as number) < 0) {
    throw new LineError(1, "the header's entries is not a count");
  }
  return header.entries as number;
}

/**
 * The lines of `file` from its start, as `split("\n")` gives them (the last one also without a
 * "\n" after it), read a chunk at a time: a line may begin in one chunk and end in another.
 */
/**
 * The lines of `lines`, each also fed to `hash`: the passes over one file compare what they read.
 * Its size and times alone missed a rewrite of the same size in the same second, whose times were
 * put back (the runtime gives the change time in whole seconds; probe HL: two swapped key digest
 * lines were written).
 */
async function* hashed(
  lines: AsyncGenerator<string>,
  hash: ReturnType<typeof sha256.create>,
): AsyncGenerator<string> {
  for await (const text of lines) {
    hash.update(ENCODER.encode(text + "\n"));
    yield text;
  }
}
const ENCODER = new TextEncoder();

async function* linesOf(file: Deno.FsFile): AsyncGenerator<string> {
  await file.seek(0, Deno.SeekMode.Start);
  const buf = new Uint8Array(CHUNK);
  const decoder = new TextDecoder();
  let rest = "";
  let line = 1;
  for (;;) {
    const n = await file.read(buf);
    // `stream`: a character cut between two chunks is decoded once both are read.
    const text = n === null
      ? decoder.decode()
      : decoder.decode(buf.subarray(0, n), { stream: true });
    let start = 0;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
      yield rest + text.slice(start, end);
      rest = "";
      start = end + 1;
      line++;
    }
    rest += text.slice(start);
    if (rest.length > MAX_LINE) throw new LineError(line, "longer than any entry can be");
    if (n === null) {
      yield rest;
      return;
    }
  }
}

/** One commit writing `batch`, each entry only where its key is not yet: as restore writes. */
function insertion(kv: Deno.Kv, batch: Decoded[]): Deno.AtomicOperation {
  const op = kv.atomic();
  for (const e of batch) {
    op.check({ key: e.key, versionstamp: null }).set(e.key, e.value, lifeOf(e));
  }
  return op;
}

/** The life an entry is written with: none once it is over (restore leaves it out). */
function lifeOf({ expireIn }: Decoded): { expireIn: number } | undefined {
  return expireIn !== undefined && expireIn > 0 ? { expireIn } : undefined;
}

/**
 * The SHA-256 of `key` as KV tells keys apart (-0 is not 0, and a string's lone surrogate is the
 * U+FFFD KV keeps for it), as eight words in a shared array: read them before the next call.
 */
function keyDigest(key: Deno.KvKey): Int32Array {
  const parts = key.map((p) => {
    if (typeof p === "string") return { s: p.toWellFormed() };
    if (Object.is(p, -0)) return { n: "-0" };
    return encodeKey([p])[0];
  });
  return sha256Words(JSON.stringify(parts));
}

/**
 * The keys seen so far, 16 bytes of SHA-256 each (127 bits: the lowest is set, so that no digest
 * is an empty slot), open-addressed in one typed array kept at most half full. It is the one
 * thing restore holds that grows with the file: 32 to 64 bytes an entry, outside V8's heap. A Set
 * of 8-unit strings took 58 bytes an entry in the heap, which V8 let grow to some three times its
 * live size between collections: restoring 1.6 million entries peaked at 686 MB, 283 MB this way.
 */
class DigestSet {
  #slots = new Int32Array(4 * 1024);
  #size = 0;

  /** Adds the first four words of `w`; false when they were there already. */
  add(w: Int32Array): boolean {
    if (2 * (this.#size + 1) > this.#slots.length / 4) {
      const old = this.#slots;
      this.#slots = new Int32Array(old.length * 2);
      for (let j = 0; j < old.length; j += 4) {
        if (old[j + 3] !== 0) {
          DigestSet.#put(this.#slots, old[j], old[j + 1], old[j + 2], old[j + 3]);
        }
      }
    }
    const added = DigestSet.#put(this.#slots, w[0], w[1], w[2], w[3] | 1);
    if (added) this.#size++;
    return added;
  }

  static #put(slots: Int32Array, a: number, b: number, c: number, d: number): boolean {
    const mask = slots.length / 4 - 1;
    for (let i = a & mask;; i = (i + 1) & mask) {
      const j = i * 4;
      if (slots[j + 3] === 0) {
        slots[j] = a;
        slots[j + 1] = b;
        slots[j + 2] = c;
        slots[j + 3] = d;
        return true;
      }
      if (slots[j] === a && slots[j + 1] === b && slots[j + 2] === c && slots[j + 3] === d) {
        return false;
      }
    }
  }
}

/**
 * Tries `batch` in the scratch store as restore will commit it (a life KV refuses, an
 * `expires_at` of 1e300, failed only in the real write, after the entries before it), then
 * deletes it there again so that the scratch store stays small. A batch KV refuses is tried an
 * entry at a time to name the first line it refuses; so is one with a key seen before.
 */
async function tried(scratch: Deno.Kv, batch: Decoded[], seen: DigestSet): Promise<void> {
  if (batch.length === 0) return;
  const once = (entry: Decoded) => {
    if (!seen.add(keyDigest(entry.key))) {
      throw new LineError(entry.line, "the same key as an earlier line");
    }
  };
  let why: string;
  try {
    await insertion(scratch, batch).commit();
    const gone = scratch.atomic();
    for (const e of batch) gone.delete(e.key);
    await gone.commit();
    for (const e of batch) once(e);
    return;
  } catch (e) {
    if (e instanceof LineError) throw e;
    why = firstLine(e);
  }
  for (const e of batch) {
    once(e);
    try {
      await scratch.atomic().set(e.key, e.value, lifeOf(e)).commit();
    } catch (err) {
      throw new LineError(e.line, firstLine(err));
    }
    await scratch.delete(e.key);
  }
  throw new LineError(
    batch[0].line,
    `lines ${batch[0].line} to ${batch[batch.length - 1].line}, one commit of restore: ${why}`,
  );
}

/**
 * Pass 1: every line of the file checked before anything is written: JSON, key and value shapes,
 * the header's count, no key twice, and each entry accepted by KV (key and value size limits),
 * tried in a throw-away in-memory store (see tried). So a file that cannot be restored whole
 * writes nothing. Returns the header's count.
 */
async function checkedFile(
  file: Deno.FsFile,
  name: string,
  now: number,
): Promise<{ total: number; read: string }> {
  const hash = sha256.create();
  const lines = hashed(linesOf(file), hash);
  const first = await lines.next();
  const total = headerCount(first.done ? "" : first.value, name);
  // Neither the keys nor the scratch store's rows are kept: a digest of each key (DigestSet).
  const seen = new DigestSet();
  const keys = new KeyIndexCheck();
  const scratch = await Deno.openKv(":memory:");
  try {
    let batch: Decoded[] = [];
    let count = 0;
    let line = 1;
    for await (const text of lines) {
      line++;
      if (!text.trim()) continue;
      let entry: Decoded;
      try {
        entry = decoded(text, line, now);
      } catch (e) {
        // The first line that cannot be restored is the one named, as when each was tried alone.
        await tried(scratch, batch, seen);
        throw e;
      }
      keys.see(entry.key, entry.value, line);
      batch.push(entry);
      count++;
      if (batch.length === BATCH) {
        await tried(scratch, batch, seen);
        batch = [];
      }
    }
    await tried(scratch, batch, seen);
    const disagree = keys.problem();
    if (disagree) throw new LineError(disagree.line, disagree.why);
    if (count !== total) {
      throw new Error(`${name} holds ${count} entries, its header says ${total}`);
    }
    return { total, read: bytesHex(hash.digest()) };
  } finally {
    scratch.close();
  }
}

/**
 * Whether every key of `batch` is in the store: the store was empty, and nothing else writes a
 * restored account's entries before its record exists.
 */
async function landed(kv: Deno.Kv, batch: Decoded[]): Promise<boolean> {
  const got = await kv.getMany(batch.map((e) => e.key));
  return got.every((e) => e.versionstamp !== null);
}

/** Commits one batch of entries (the live ones); returns how many were written. */
async function committed(
  kv: Deno.Kv,
  entries: Decoded[],
  restored: number,
  total: number,
): Promise<number> {
  const batch = entries.filter(({ expireIn }) => expireIn === undefined || expireIn > 0);
  let ok = false;
  // Processes serving the same file take turns with its write lock (lock_backoff.ts): failing
  // on the first commit that found it held left a half-restored store that was being served.
  for (let tries = 0;; tries++) {
    const op = insertion(kv, batch);
    try {
      ok = (await op.commit()).ok;
      // A commit that threw may have landed all the same (a remote store's lost reply).
      if (!ok && tries > 0) ok = await landed(kv, batch);
      break;
    } catch (e) {
      if (tries + 1 >= LOCKED_TRIES) {
        throw new Error(
          `Cannot restore: the store failed after ${restored} of ${total} entries were written (${
            firstLine(e)
          }); restore into a new store`,
        );
      }
      await afterLocked(tries + 1);
    }
  }
  if (!ok) {
    throw new Error(
      `Cannot restore: the store changed while it was being restored (after ${restored} entries); restore into a new store`,
    );
  }
  return batch.length;
}

/** The file as stat tells it apart: a write changes its size or its times. */
async function stamp(file: Deno.FsFile): Promise<string> {
  const s = await file.stat();
  return `${s.size} ${s.mtime?.getTime()} ${s.ctime?.getTime()}`;
}

/**
 * Loads a snapshot into an empty store; refuses a store that holds anything. The whole file is
 * checked first (see checkedFile): a refused file leaves the store empty, ready for a fixed one.
 * Then it is read again and written ten entries a commit, the key digest entries in a last pass.
 */
export async function restore(kv: Deno.Kv, file: string): Promise<number> {
  const notEmpty = () =>
    new Error("Cannot restore into a store that is not empty: point KV_PATH at a new store");
  if (!(await holdsNothing(kv))) throw notEmpty();
  // One moment for both passes: an entry whose life is over when checked is not written later.
  const now = Date.now();
  const refused = (e: unknown) =>
    new Error(`Cannot restore: ${e instanceof LineError ? `${file} ` : ""}${firstLine(e)}`);
  const notRegular = new Error(
    `Cannot restore: ${file} is not a regular file; it is read twice, to check it and to write it`,
  );
  // Before opening: opening a FIFO waits for a writer, which hung restore for good (probe AQ).
  // A symlink to a regular file is followed, as the open follows it.
  const kind = await Deno.stat(file).catch((e) => {
    throw refused(e);
  });
  if (!kind.isFile) throw notRegular;
  let f: Deno.FsFile;
  try {
    f = await Deno.open(file);
  } catch (e) {
    throw refused(e);
  }
  // Both passes read this one open file, so a backup renamed over FILE meanwhile is not read in
  // the second; a write into it is seen by its stamp.
  using opened = f;
  if (!(await opened.stat()).isFile) throw notRegular; // replaced between the stat and the open
  const before = await stamp(opened);
  let total: number;
  let read: string;
  try {
    ({ total, read } = await checkedFile(opened, file, now));
  } catch (e) {
    throw refused(e);
  }
  const changed = (restored: number, why = "") =>
    new Error(
      `Cannot restore: ${file} changed while it was being restored${why}; ${
        restored
          ? `${restored} entries were written, restore into a new store`
          : "nothing was written"
      }`,
    );
  if (await stamp(opened) !== before) throw changed(0);
  // Until the last entry is written, the store is marked: one left partly written (a SIGKILL, a
  // power cut) is then refused by the server and every admin command rather than served.
  if (!(await markRestoreStarted(kv, file, total, now))) throw notEmpty();
  // Pass 2: the same lines, decoded again and written.
  let restored = 0;
  let count = 0;
  let batch: Decoded[] = [];
  // What each writing pass read, to compare with what the check read.
  const reads = [sha256.create(), sha256.create()];
  const firstLines = hashed(linesOf(opened), reads[0]);
  // A signal ends the writing between two commits and says what the store then holds: killed by
  // it, the restore left a partly written store without a word, some of whose keys worked and
  // could not be revoked (probe HE). A second signal ends the process at once.
  let signal: Deno.Signal | null = null;
  const onSignal = (s: Deno.Signal) => () => {
    if (signal) Deno.exit(130);
    signal = s;
  };
  const listeners = SIGNALS.map((s) => [s, onSignal(s)] as const);
  const stopAt = () => {
    if (signal) {
      throw new Error(
        `Cannot restore: stopped by ${signal} after ${restored} of ${total} entries were written; the store holds them and is marked unfinished (neither the server nor the admin commands will use it): delete it (with its -wal and -shm files) and restore again`,
      );
    }
  };
  for (const [s, l] of listeners) Deno.addSignalListener(s, l);
  try {
    // The key digest entries, by which a presented key is found, go last, in a pass of their own:
    // a restore cut short then leaves no key that works without its key id entry, by which it is
    // revoked. This version refuses such a store anyway (the mark above); a release from before the
    // mark served it, and a key restored without its key id entry answered 200 and its revoke 404
    // (probe HK).
    for (const digests of [false, true]) {
      const lines = digests ? hashed(linesOf(opened), reads[1]) : firstLines;
      let line = 1;
      await lines.next();
      for await (const text of lines) {
        line++;
        if (!text.trim()) continue;
        const entry = decoded(text, line, now);
        if ((entry.key[0] === KEY_HASH) !== digests) {
          if (!digests) count++;
          continue;
        }
        batch.push(entry);
        if (!digests) count++;
        if (batch.length === BATCH) {
          stopAt();
          restored += await committed(kv, batch, restored, total);
          batch = [];
        }
      }
      stopAt();
      if (batch.length) restored += await committed(kv, batch, restored, total);
      batch = [];
    }
  } catch (e) {
    // A line that passed the first pass and fails this one was changed in between.
    if (e instanceof LineError) throw changed(restored, ` (${e.message})`);
    // A commit refused as "the store changed" because a line added to the file meanwhile repeats a
    // key: the file is what changed (probe HL).
    const stopped = (e as Error).message.startsWith("Cannot restore: stopped by");
    if (!stopped && (count > total || await stamp(opened) !== before)) throw changed(restored);
    if ((e as Error).message.startsWith("Cannot restore")) throw e;
    throw new Error(
      `Cannot restore: ${
        firstLine(e)
      } after ${restored} of ${total} entries were written; restore into a new store`,
    );
  } finally {
    for (const [s, l] of listeners) Deno.removeSignalListener(s, l);
  }
  const same = reads.every((h) => bytesHex(h.digest()) === read);
  if (count !== total || !same || await stamp(opened) !== before) throw changed(restored);
  await markRestoreFinished(kv);
  return restored;
}
