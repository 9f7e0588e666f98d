/** A seeded random source (mulberry32), so that a failing proof run can be repeated exactly. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: PROOF_SEED when given, else a fresh one (printed with the figures). */
export function runSeed(): number {
  const given = Deno.env.get("PROOF_SEED");
  return given ? Number(given) : Math.floor(Math.random() * 2 ** 31);
}
