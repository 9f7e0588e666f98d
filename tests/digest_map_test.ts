import assert from "node:assert/strict";
import { DigestMap } from "../metering/digest_map.ts";
import { digestHex, sha256Hex, sha256Words } from "../metering/sha256.ts";

const words = (...w: number[]) => Int32Array.from(w);

Deno.test("DigestMap finds a digest by all eight words, also among digests sharing the first", () => {
  const m = new DigestMap<string>();
  const a = words(1, 2, 3, 4, 5, 6, 7, 8);
  const b = words(1, 2, 3, 4, 5, 6, 7, 9); // same first word, differs in the last
  m.set(a, "a");
  assert.equal(m.get(b), undefined);
  m.set(b, "b");
  assert.equal(m.get(words(1, 2, 3, 4, 5, 6, 7, 8)), "a");
  assert.equal(m.get(words(1, 2, 3, 4, 5, 6, 7, 9)), "b");
  assert.equal(m.get(words(2, 2, 3, 4, 5, 6, 7, 8)), undefined);
  m.set(words(1, 2, 3, 4, 5, 6, 7, 9), "b2");
  assert.equal(m.get(b), "b2");
});

Deno.test("DigestMap keeps its own copy of a digest held in sha256Words' shared array", () => {
  const m = new DigestMap<string>();
  m.set(sha256Words("shelf_live_one"), "one");
  sha256Words("shelf_live_two"); // overwrites the shared array
  assert.equal(m.get(sha256Words("shelf_live_one")), "one");
  assert.equal(m.get(sha256Words("shelf_live_two")), undefined);
});

Deno.test("digestHex(sha256Words(x)) is sha256Hex(x)", () => {
  for (const x of ["", "abc", "shelf_test_" + "0f".repeat(24), "é€😀".repeat(30)]) {
    assert.equal(digestHex(sha256Words(x)), sha256Hex(x));
  }
});

Deno.test("DigestMap holds at most its bound, starting afresh past it (issue 15.4)", () => {
  const m = new DigestMap<number>(3);
  for (let i = 1; i <= 3; i++) m.set(words(i, 0, 0, 0, 0, 0, 0, 0), i);
  assert.equal(m.size, 3);
  m.set(words(1, 0, 0, 0, 0, 0, 0, 0), 10); // a replacement is not a new entry
  assert.equal(m.size, 3);
  m.set(words(4, 0, 0, 0, 0, 0, 0, 0), 4);
  assert.equal(m.size, 1);
  assert.equal(m.get(words(4, 0, 0, 0, 0, 0, 0, 0)), 4);
  assert.equal(m.get(words(2, 0, 0, 0, 0, 0, 0, 0)), undefined);
});

Deno.test("DigestMap finds a stored digest by a copy even after sha256Words' shared array moved on", () => {
  const m = new DigestMap<string>();
  const shared = sha256Words("shelf_live_one");
  const one = shared.slice(); // the caller's own copy of the digest
  m.set(shared, "one");
  sha256Words("shelf_live_two"); // the shared array now holds another digest
  assert.equal(m.get(one), "one");
  const two = sha256Words("shelf_live_two").slice();
  assert.equal(m.get(two), undefined);
});
