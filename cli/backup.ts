/**
 * `deno task admin backup FILE` / `restore FILE` (issue 14.6): every entry of the store that
 * must survive, as JSON Lines, one `{key, value, expire_at?}` per entry, typed so that KV's
 * Uint8Array, bigint and Date values come back as they were. It is generic over the key layout
 * (metering/kv_layout.ts), so keys added later are backed up without a change here; only
 * the result cache, which refills itself, is left out. It is also how a deployment moves from a
 * KV file to Deno Deploy's KV or a KV Connect server: back up from one KV_PATH, restore to the
 * other.
 *
 * Entries written with expireIn (sessions, mailed tokens) carry their own `expires_at`; they are
 * restored with the life they have left, and not at all once it is over.
 *
 * Consistency: Deno KV has no snapshot read across a listing. A store in a local file is copied
 * first with SQLite's own online backup, which reads it in one transaction however busy the
 * service is, and the copy is listed; comparing two listings instead failed for good under steady
 * writes (one signed-in user saving a form 50 times a second was enough). A remote store (Deno
 * Deploy, KV Connect) is still listed twice and the versionstamps compared; if anything changed in
 * between it lists again (up to 5 times) and otherwise refuses.
 *
 * The target: a file that exists is replaced only with `--force`, and never the store's own file
 * or its -wal / -shm / -journal companions (a backup written over the live store destroyed it).
 */
import { afterLocked, LOCKED_TRIES } from "../core/lock_backoff.ts";
import { backup as sqliteBackup, DatabaseSync } from "node:sqlite";
import { KV } from "../metering/kv_layout.ts";
import { kvFiles, removeKvFiles, removeKvFilesSync } from "../core/kv_files.ts";

/** Prefixes that are not state: a restored deployment rebuilds them on its own. */
const DISPOSABLE = [
  KV.resultCache("", "")[0],
  KV.signinAttempts("")[0],
  KV.accountMails("")[0],
  KV.clientMails("")[0],
  KV.clientSignins("")[0],
  KV.clientSignups("")[0],
];
const FORMAT = "shelf-backup/1";

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

async function listAll(kv: Deno.Kv): Promise<Deno.KvEntry<unknown>[]> {
  const out: Deno.KvEntry<unknown>[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    if (!DISPOSABLE.includes(e.key[0] as string)) out.push(e);
  }
  return out;
}

/** Every entry of a remote store at one moment: two listings that agree, or an error. */
async function listedTwice(kv: Deno.Kv): Promise<Deno.KvEntry<unknown>[]> {
  for (let round = 0; round < 5; round++) {
    const first = await listAll(kv);
    const second = await listAll(kv);
    const same = first.length === second.length &&
      first.every((e, i) =>
        e.versionstamp === second[i].versionstamp &&
        JSON.stringify(e.key) === JSON.stringify(second[i].key)
      );
    if (same) return first;
  }
  throw new Error(
    "Cannot back up: the store kept changing while it was read; retry when it is quieter",
  );
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
  const path = await Deno.makeTempFile({ dir, prefix });
  const stop = () => {
    removeKvFilesSync(path);
    Deno.exit(130);
  };
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, stop);
  try {
    return await work(path);
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, stop);
    await removeKvFiles(path);
  }
}

/** Every entry of the store in the SQLite file `kvFile`, from a copy taken in one transaction. */
function listedFromCopy(kvFile: string, dir: string): Promise<Deno.KvEntry<unknown>[]> {
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
      return await listAll(snapshot);
    } finally {
      snapshot.close();
    }
  });
}

/** The absolute path `file` names, through symbolic links where they exist. */
async function resolved(file: string): Promise<string> {
  const abs = file.startsWith("/") ? file : `${Deno.cwd()}/${file}`;
  try {
    return await Deno.realPath(abs);
  } catch {
    const slash = abs.lastIndexOf("/");
    const dir = await Deno.realPath(abs.slice(0, slash) || "/").catch(() => abs.slice(0, slash));
    return `${dir}/${abs.slice(slash + 1)}`;
  }
}

async function checkTarget(file: string, kvFile: string | undefined, force: boolean) {
  if (kvFile) {
    const store = await resolved(kvFile);
    const target = await resolved(file);
    if (kvFiles(store).includes(target)) {
      throw new Error(`Cannot back up into ${file}: it is the store itself (KV_PATH)`);
    }
  }
  const exists = await Deno.lstat(file).then(() => true, () => false);
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
  const entries = opts.kvFile ? await listedFromCopy(opts.kvFile, dir) : await listedTwice(kv);
  const lines = [
    JSON.stringify({
      format: FORMAT,
      created_at: new Date(opts.now ?? Date.now()).toISOString(),
      entries: entries.length,
    }),
  ];
  for (const e of entries) {
    lines.push(JSON.stringify({ key: encodeKey(e.key), value: encodeValue(e.value) }));
  }
  // Made new under a name nobody can guess (a planted `FILE.partial` symlink to the store was
  // written through), and the owner's alone, like the store: it holds webhook secrets and key
  // and password digests.
  await withTempFile(dir, ".shelf-backup-", async (tmp) => {
    await Deno.writeTextFile(tmp, lines.join("\n") + "\n");
    await Deno.rename(tmp, file);
  });
  return entries.length;
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

/**
 * Every line of the file checked and decoded before anything is written: JSON, key and value
 * shapes, no key twice, and each entry accepted by KV (key and value size limits), tried in a
 * throw-away in-memory store. So a file that cannot be restored whole writes nothing.
 */
async function readBackup(file: string, now: number): Promise<Decoded[]> {
  const lines = (await Deno.readTextFile(file)).split("\n");
  const parse = (i: number): unknown => {
    try {
      return JSON.parse(lines[i]);
    } catch (e) {
      throw new LineError(i + 1, `not JSON (${(e as Error).message.split("\n")[0]})`);
    }
  };
  if (!lines[0]?.trim()) throw new Error(`${file} is not a Shelf backup (${FORMAT}): it is empty`);
  let header: { format?: unknown; entries?: unknown } | null;
  try {
    header = JSON.parse(lines[0]);
  } catch {
    header = null;
  }
  if (typeof header !== "object" || header === null || header.format !== FORMAT) {
    throw new Error(`${file} is not a Shelf backup (${FORMAT})`);
  }
  if (!Number.isSafeInteger(header.entries) || (header.entries as number) < 0) {
    throw new LineError(1, "the header's entries is not a count");
  }
  const scratch = await Deno.openKv(":memory:");
  try {
    const out: Decoded[] = [];
    for (let i = 1; i < lines.length; i++) {
      if (!lines[i].trim()) continue;
      const line = i + 1;
      const entry = parse(i);
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
        throw new LineError(line, "not an entry {key, value}");
      }
      const { key: rawKey, value: rawValue } = entry as { key?: unknown; value?: unknown };
      const key = checkedKey(rawKey, line);
      const value = checkedValue(rawValue, line);
      const expiresAt = (value as { expires_at?: unknown } | null)?.expires_at;
      const expireIn = typeof expiresAt === "number" ? expiresAt - now : undefined;
      // Written here as restore will write it, life left included: a life KV refuses (an
      // `expires_at` of 1e300) failed only in the real write, after the entries before it.
      const life = expireIn !== undefined && expireIn > 0 ? { expireIn } : undefined;
      let ok: boolean;
      try {
        ok = (await scratch.atomic().check({ key, versionstamp: null }).set(key, value, life)
          .commit()).ok;
      } catch (e) {
        throw new LineError(line, (e as Error).message.split("\n")[0]);
      }
      if (!ok) throw new LineError(line, "the same key as an earlier line");
      out.push({ line, key, value, expireIn });
    }
    if (out.length !== header.entries) {
      throw new Error(`${file} holds ${out.length} entries, its header says ${header.entries}`);
    }
    return out;
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

/**
 * Loads a snapshot into an empty store; refuses a store that holds anything. The whole file is
 * checked first (see readBackup): a refused file leaves the store empty, ready for a fixed one.
 */
export async function restore(kv: Deno.Kv, file: string): Promise<number> {
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) {
    throw new Error("Cannot restore into a store that is not empty: point KV_PATH at a new store");
  }
  const now = Date.now();
  let entries: Decoded[];
  try {
    entries = await readBackup(file, now);
  } catch (e) {
    throw new Error(
      `Cannot restore: ${e instanceof LineError ? `${file} ` : ""}${
        (e as Error).message.split("\n")[0]
      }`,
    );
  }
  // Ten entries a commit: every KV backend takes ten checks in one atomic operation.
  let restored = 0;
  for (let i = 0; i < entries.length; i += 10) {
    const batch = entries.slice(i, i + 10)
      .filter(({ expireIn }) => expireIn === undefined || expireIn > 0);
    const n = batch.length;
    let ok = false;
    // Processes serving the same file take turns with its write lock (lock_backoff.ts): failing
    // on the first commit that found it held left a half-restored store that was being served.
    for (let tries = 0;; tries++) {
      const op = kv.atomic();
      for (const { key, value, expireIn } of batch) {
        op.check({ key, versionstamp: null })
          .set(key, value, expireIn === undefined ? undefined : { expireIn });
      }
      try {
        ok = (await op.commit()).ok;
        // A commit that threw may have landed all the same (a remote store's lost reply).
        if (!ok && tries > 0) ok = await landed(kv, batch);
        break;
      } catch (e) {
        if (tries + 1 >= LOCKED_TRIES) {
          throw new Error(
            `Cannot restore: the store failed after ${restored} of ${entries.length} entries were written (${
              (e as Error).message.split("\n")[0]
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
    restored += n;
  }
  return restored;
}
