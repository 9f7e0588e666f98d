/**
 * Where a key value must never appear: any entry of the KV store (key parts and values, strings
 * and bytes alike), anything the server wrote to its logs, any error body it sent.
 */
export interface SecretScan {
  kvEntries: number;
  logBytes: number;
  bodies: number;
  /** Where a secret was found: "kv ['x', …]", "logs", "body 12". */
  hits: string[];
}

/** Every entry of a KV file, as text: each key part and the value, bytes as hex and as latin1. */
export async function kvText(kvPath: string): Promise<{ entries: number; texts: string[] }> {
  const kv = await Deno.openKv(kvPath);
  try {
    const texts: string[] = [];
    let entries = 0;
    for await (const e of kv.list({ prefix: [] })) {
      entries++;
      texts.push(`${flat(e.key)} => ${flat(e.value)}`);
    }
    return { entries, texts };
  } finally {
    kv.close();
  }
}

function flat(v: unknown): string {
  return JSON.stringify(v, (_k, x) => {
    if (typeof x === "bigint") return x.toString();
    if (x instanceof Uint8Array) {
      return `${Array.from(x, (b) => b.toString(16).padStart(2, "0")).join("")} ${
        new TextDecoder("latin1").decode(x)
      }`;
    }
    if (x instanceof Map) return Object.fromEntries(x);
    if (x instanceof Set) return [...x];
    return x;
  });
}

/** The forms a key could leak in: the whole value and its 48 random hex characters. */
function needles(keys: string[]): string[] {
  return keys.flatMap((k) => [k, k.replace(/^shelf_(live|test)_/, "")]);
}

export async function scanForSecrets(opts: {
  keys: string[];
  kvPaths: string[];
  logs: string[];
  bodies: string[];
}): Promise<SecretScan> {
  const find = needles(opts.keys);
  const hits: string[] = [];
  let kvEntries = 0;
  for (const path of opts.kvPaths) {
    const { entries, texts } = await kvText(path);
    kvEntries += entries;
    for (const t of texts) if (find.some((n) => t.includes(n))) hits.push(`kv ${t.slice(0, 120)}`);
  }
  const logBytes = opts.logs.reduce((n, l) => n + l.length, 0);
  opts.logs.forEach((l, i) => find.some((n) => l.includes(n)) && hits.push(`logs of process ${i}`));
  opts.bodies.forEach((b, i) =>
    find.some((n) => b.includes(n)) && hits.push(`body ${i}: ${b.slice(0, 120)}`)
  );
  return { kvEntries, logBytes, bodies: opts.bodies.length, hits };
}
