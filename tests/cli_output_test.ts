/**
 * The admin CLI's output rules (cli/output.ts) that a real pipe cannot show in a test's time: the
 * one-minute wait for a reader counts from its last progress, so a reader slower than a minute in
 * all but steady is waited on (probe FX: a slow reader's key was revoked; probe GT: nothing pinned
 * that the wait starts again with each write taken).
 */
import assert from "node:assert/strict";
import { writeAll } from "../cli/output.ts";

Deno.test("admin CLI output: a reader that takes a little every few seconds is waited on, however long it takes in all", async () => {
  const realNow = Date.now;
  let ahead = 0; // the clock is moved on by each write: 20 s a write, minutes in all
  Date.now = () => realNow() + ahead;
  try {
    let taken = 0;
    const slow = {
      write: async (p: Uint8Array) => {
        await new Promise((r) => setTimeout(r, 30)); // longer than the writer's own tick
        ahead += 20_000;
        const n = Math.min(p.length, 1_000);
        taken += n;
        return n;
      },
    };
    const text = "an account of the list, one line of it\n".repeat(500); // 20,000 bytes
    await writeAll(slow, text);
    assert.equal(taken, new TextEncoder().encode(text).length);
    assert.ok(ahead > 5 * 60_000, `${ahead} ms in all`);
  } finally {
    Date.now = realNow;
  }
});
