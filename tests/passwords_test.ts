/**
 * Dashboard passwords are compared as text, not as the code points a keyboard sent
 * (metering/passwords.ts): "é" typed as one character or as "e" and a combining accent is the same
 * password (NFKC), so a password set on one device works on another (probe GV: nothing pinned it).
 */
import assert from "node:assert/strict";
import { hashPassword, verifyPassword } from "../metering/passwords.ts";

Deno.test("a password matches however its accented letters are composed, and nothing else does", async () => {
  const composed = "caf\u00e9-au-lait-2026";
  const decomposed = "cafe\u0301-au-lait-2026";
  assert.notEqual(composed, decomposed);
  const stored = await hashPassword(composed, Date.now());
  assert.equal(await verifyPassword(composed, stored), true);
  assert.equal(await verifyPassword(decomposed, stored), true, "the same letters, decomposed");
  const fromDecomposed = await hashPassword(decomposed, Date.now());
  assert.equal(await verifyPassword(composed, fromDecomposed), true);
  assert.equal(await verifyPassword("cafe-au-lait-2026", stored), false, "no accent is another");
});
