/**
 * A map keyed by SHA-256 digests held as their eight 32-bit words. Every metered call looks up
 * the digest of the key it presents; keyed this way, that costs neither formatting the digest
 * as hex nor hashing a 64-character string.
 */
export class DigestMap<V> {
  readonly #buckets = new Map<number, { words: Int32Array; value: V }[]>();

  get(words: Int32Array): V | undefined {
    const bucket = this.#buckets.get(words[0]);
    if (bucket) {
      for (const entry of bucket) if (sameWords(entry.words, words)) return entry.value;
    }
    return undefined;
  }

  set(words: Int32Array, value: V): void {
    const bucket = this.#buckets.get(words[0]);
    const entry = { words: words.slice(0, 8), value };
    if (!bucket) return void this.#buckets.set(words[0], [entry]);
    const at = bucket.findIndex((e) => sameWords(e.words, words));
    if (at >= 0) bucket[at] = entry;
    else bucket.push(entry);
  }
}

function sameWords(a: Int32Array, b: Int32Array): boolean {
  for (let i = 0; i < 8; i++) if (a[i] !== b[i]) return false;
  return true;
}
