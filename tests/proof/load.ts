/**
 * Bounded load: `connections` loops each sending one request after the other until `untilMs`
 * (client clock) or `maxCalls` in all, whichever comes first. Nothing here runs unbounded.
 */
export async function drive<T>(opts: {
  connections: number;
  untilMs: number;
  maxCalls: number;
  send: (n: number) => Promise<T>;
}): Promise<T[]> {
  const out: T[] = [];
  let started = 0;
  const loop = async () => {
    while (Date.now() < opts.untilMs && started < opts.maxCalls) {
      const n = started++;
      out.push(await opts.send(n));
    }
  };
  await Promise.all(Array.from({ length: opts.connections }, loop));
  return out;
}
