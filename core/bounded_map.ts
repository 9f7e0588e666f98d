/**
 * The caches that must not grow with the number of accounts or keys seen: a Map that, when full,
 * drops its oldest entry (Map keeps insertion order, so that costs no bookkeeping).
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key); // re-inserted last, so an entry written again counts as new
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}
