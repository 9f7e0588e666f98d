/**
 * A map keyed by SHA-256 digests held as their eight 32-bit words. Every metered call looks up
 * the digest of the key it presents; keyed this way, that costs neither formatting the digest
 * as hex nor hashing a 64-character string.
 */
export class DigestMap<V> {
  readonly #buckets = new Map<number, { words: Int32Array; value: V }[]>();
  #size = 0;

  /** Past `max` entries the map starts afresh: it is a cache, and the store has every entry. */
  constructor(private readonly max = 200_000) {}

  get size(): number {
    return this.#size;
  }

  get(words: Int32Array): V | undefined {
    const bucket = this.#buckets.get(words[0]);
    if (bucket) {
      for (const entry of bucket) if (sameWords(entry.words, words)) return entry.value;
    }
    return undefined;
  }

  set(words: Int32Array, value: V): void {
    const entry = { words: words.slice(0, 8), value };
    const bucket = this.#buckets.get(words[0]);
    const at = bucket ? bucket.findIndex((e) => sameWords(e.words, words)) : -1;
    if (bucket && at >= 0) {
      bucket[at] = entry;
      return;
    }
    if (this.#size >= this.max) {
      this.#buckets.clear();
      this.#size = 0;
    }
    const fresh = this.#buckets.get(words[0]);
    if (fresh) fresh.push(entry);
    else this.#buckets.set(words[0], [entry]);
    this.#size++;
  }
}

function sameWords(a: Int32Array, b: Int32Array): boolean {
  for (let i = 0; i < 8; i++) if (a[i] !== b[i]) return false;
  return true;
}
