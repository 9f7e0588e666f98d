/**
 * The shares of the read budget (upstream/read_capped.ts) at their edges, which probe HT found
 * unpinned: an account holding exactly one page still reads from the reserve kept for single
 * pages, and the process-wide budget is 256 MiB, so 32 pages at the 8 MiB cap are read at once
 * and a 33rd is refused with 503 upstream_busy. ByteBudget only counts: no page is allocated.
 */
import assert from "node:assert/strict";
import {
  ByteBudget,
  MAX_UPSTREAM_BYTES,
  processReadBudget,
  ReadBudgetSpent,
  readCapped,
} from "../upstream/read_capped.ts";

const MiB = 1024 * 1024;

Deno.test("an account holding exactly one page may still take it from the reserve, and not one byte more", () => {
  // A page is a sixteenth of the budget here (62 bytes); the last quarter (250) is the reserve.
  const budget = new ByteBudget(1_000, 250);
  assert.ok(budget.take(500, "a"));
  assert.ok(budget.take(250, "b"), "b within its share");
  // 750 taken: only the reserve is left, open to accounts holding at most one page.
  assert.ok(budget.take(62, "d"), "an account's one page was refused the reserve");
  assert.equal(budget.take(1, "d"), false, "one byte past a page still took the reserve");
  assert.equal(budget.used, 812);
});

Deno.test("the process's read budget holds 256 MiB: 32 accounts' pages at the cap are read at once, and the next read is refused 503", async () => {
  assert.equal(MAX_UPSTREAM_BYTES, 8 * MiB);
  assert.equal(processReadBudget.limit, 256 * MiB);
  const held: string[] = [];
  try {
    for (let i = 0; i < 32; i++) {
      assert.ok(processReadBudget.take(MAX_UPSTREAM_BYTES, `acct-${i}`), `page ${i + 1} refused`);
      held.push(`acct-${i}`);
    }
    assert.ok(processReadBudget.spent("late"));
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(new Uint8Array(1));
        c.close();
      },
    });
    await assert.rejects(readCapped(body, MAX_UPSTREAM_BYTES, "late"), (e: unknown) => {
      assert.ok(e instanceof ReadBudgetSpent);
      assert.equal(e.status, 503);
      assert.equal(e.code, "upstream_busy");
      return true;
    });
  } finally {
    for (const owner of held) processReadBudget.give(MAX_UPSTREAM_BYTES, owner);
  }
  assert.equal(processReadBudget.used, 0);
  assert.equal(processReadBudget.spent("late"), false);
});
