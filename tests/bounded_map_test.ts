import assert from "node:assert/strict";
import { setBounded } from "../core/bounded_map.ts";

Deno.test("setBounded keeps at most `max` entries, dropping the one written longest ago", () => {
  const m = new Map<string, number>();
  for (let i = 0; i < 5; i++) setBounded(m, `k${i}`, i, 3);
  assert.deepEqual([...m.keys()], ["k2", "k3", "k4"]);
  setBounded(m, "k2", 20, 3); // written again: now the newest
  setBounded(m, "k5", 5, 3);
  assert.deepEqual([...m.entries()], [["k4", 4], ["k2", 20], ["k5", 5]]);
});

Deno.test("setBounded at capacity: writing a key again drops nothing else and makes it the newest", () => {
  const m = new Map<string, number>();
  for (const k of ["a", "b", "c"]) setBounded(m, k, 1, 3);
  setBounded(m, "b", 2, 3); // rewritten, not added: no room is needed
  assert.deepEqual([...m.entries()], [["a", 1], ["c", 1], ["b", 2]]);
  setBounded(m, "b", 3, 3);
  setBounded(m, "b", 4, 3);
  assert.deepEqual([...m.entries()], [["a", 1], ["c", 1], ["b", 4]]);
  setBounded(m, "d", 1, 3); // a new key at capacity drops the oldest, not the busy one
  assert.deepEqual([...m.keys()], ["c", "b", "d"]);
});
