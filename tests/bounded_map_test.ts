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
