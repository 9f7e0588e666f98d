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
 * Consistency: Deno KV has no snapshot read across a listing, so the backup lists the store
 * twice and compares the versionstamps; if anything changed in between it lists again (up to 5
 * times) and otherwise refuses, so a file it writes is one consistent state.
 */
import { KV } from "../metering/kv_layout.ts";

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

function decodeKey(parts: KeyPart[]): Deno.KvKey {
  return parts.map((p) => {
    if ("s" in p) return p.s;
    if ("n" in p) return p.n;
    if ("i" in p) return BigInt(p.i);
    if ("t" in p) return p.t;
    return Uint8Array.from(atob(p.b), (c) => c.charCodeAt(0));
  });
}

async function listAll(kv: Deno.Kv): Promise<Deno.KvEntry<unknown>[]> {
  const out: Deno.KvEntry<unknown>[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    if (!DISPOSABLE.includes(e.key[0] as string)) out.push(e);
  }
  return out;
}

/** Writes the snapshot; returns the number of entries. */
export async function backup(kv: Deno.Kv, file: string, now = Date.now()): Promise<number> {
  for (let round = 0; round < 5; round++) {
    const first = await listAll(kv);
    const second = await listAll(kv);
    const same = first.length === second.length &&
      first.every((e, i) =>
        e.versionstamp === second[i].versionstamp &&
        JSON.stringify(e.key) === JSON.stringify(second[i].key)
      );
    if (!same) continue;
    const lines = [
      JSON.stringify({
        format: FORMAT,
        created_at: new Date(now).toISOString(),
        entries: first.length,
      }),
    ];
    for (const e of first) {
      lines.push(JSON.stringify({ key: encodeKey(e.key), value: encodeValue(e.value) }));
    }
    const tmp = `${file}.partial`;
    await Deno.writeTextFile(tmp, lines.join("\n") + "\n");
    await Deno.rename(tmp, file);
    return first.length;
  }
  throw new Error(
    "Cannot back up: the store kept changing while it was read; retry when it is quieter",
  );
}

/** Loads a snapshot into an empty store; refuses a store that holds anything. */
export async function restore(kv: Deno.Kv, file: string): Promise<number> {
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) {
    throw new Error("Cannot restore into a store that is not empty: point KV_PATH at a new store");
  }
  const lines = (await Deno.readTextFile(file)).split("\n").filter((l) => l.trim());
  const header = JSON.parse(lines[0] ?? "{}");
  if (header.format !== FORMAT) {
    throw new Error(`Cannot restore: ${file} is not a Shelf backup (${FORMAT})`);
  }
  const entries = lines.slice(1).map((l) => JSON.parse(l) as { key: KeyPart[]; value: Encoded });
  if (entries.length !== header.entries) {
    throw new Error(
      `Cannot restore: ${file} holds ${entries.length} entries, its header says ${header.entries}`,
    );
  }
  // Ten entries a commit: every KV backend takes ten checks in one atomic operation.
  const now = Date.now();
  let restored = 0;
  for (let i = 0; i < entries.length; i += 10) {
    const op = kv.atomic();
    for (const e of entries.slice(i, i + 10)) {
      const key = decodeKey(e.key);
      const value = decodeValue(e.value);
      const expiresAt = (value as { expires_at?: unknown } | null)?.expires_at;
      if (typeof expiresAt === "number" && expiresAt <= now) continue;
      op.check({ key, versionstamp: null })
        .set(key, value, typeof expiresAt === "number" ? { expireIn: expiresAt - now } : undefined);
      restored++;
    }
    if (!(await op.commit()).ok) {
      throw new Error("Cannot restore: the store changed while it was being restored");
    }
  }
  return restored;
}
