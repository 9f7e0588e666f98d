/**
 * PerSecond (core/per_second.ts): a count per key within the current wall-clock second, for the
 * limits on free requests (watch lists, dashboard pages). Times are given explicitly.
 */
import assert from "node:assert/strict";
import { PerSecond } from "../core/per_second.ts";

const T = Date.UTC(2026, 0, 1, 12, 0, 0, 0); // a whole second

Deno.test("PerSecond admits `limit` events of a key per wall-clock second, and `limit` again the next second", () => {
  const p = new PerSecond(2);
  assert.equal(p.take("a", T + 100), true);
  assert.equal(p.take("a", T + 500), true);
  assert.equal(p.take("a", T + 999), false, "a third in the same second");
  assert.equal(p.take("a", T + 1_000), true, "the next second opens anew");
  assert.equal(p.take("a", T + 1_001), true);
  assert.equal(p.take("a", T + 1_002), false);
  assert.equal(p.take("a", T + 2_100), true, "and the one after");
  for (let s = 3; s < 10; s++) {
    assert.equal(p.take("a", T + s * 1_000 + 10), true, `second ${s}`);
    assert.equal(p.take("a", T + s * 1_000 + 20), true, `second ${s}`);
    assert.equal(p.take("a", T + s * 1_000 + 30), false, `second ${s}`);
  }
});

Deno.test("PerSecond: a key refused this second is admitted 1.1 s later, not held for ten", () => {
  const p = new PerSecond(1);
  assert.equal(p.take("a", T + 50), true);
  assert.equal(p.take("a", T + 60), false);
  assert.equal(p.take("a", T + 1_150), true);
});

Deno.test("PerSecond remembers more keys than its limit: other keys do not reset a key's count", () => {
  const p = new PerSecond(2); // maxKeys is the default 10,000
  assert.equal(p.take("a", T), true);
  assert.equal(p.take("a", T + 1), true);
  for (let i = 0; i < 30; i++) assert.equal(p.take(`other${i}`, T + 2), true);
  assert.equal(p.take("a", T + 3), false, "a's two of this second are still counted");
});

Deno.test("PerSecond forgets only past maxKeys: the key written longest ago starts afresh", () => {
  const p = new PerSecond(1, 3);
  assert.equal(p.take("a", T), true);
  assert.equal(p.take("b", T), true);
  assert.equal(p.take("c", T), true);
  assert.equal(p.take("a", T), false);
  assert.equal(p.take("b", T), false);
  assert.equal(p.take("d", T), true); // the fourth key: "a" is forgotten
  assert.equal(p.take("b", T), false, "b is still remembered");
  assert.equal(p.take("a", T), true, "a was forgotten");
});
