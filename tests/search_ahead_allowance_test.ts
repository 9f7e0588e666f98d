/**
 * The allowance of pages fetched ahead and not used (upstream/search_ahead.ts): refilling, it
 * never grows past AHEAD_ALLOWANCE however long the account was idle, and only whole pages of it
 * are granted.
 */
import assert from "node:assert/strict";
import { AHEAD_ALLOWANCE, REFILL_MS, SearchAhead } from "../upstream/search_ahead.ts";
import { ManualClock } from "../metering/clock.ts";

/** Pages `owner` can fetch ahead and waste, one search at a time, until none is granted. */
function drain(ahead: SearchAhead, owner: string): number {
  let moved = 0;
  for (let i = 0; i < 1000; i++) {
    const granted = ahead.grant(owner, "search DE", 6000, 4);
    if (granted === 0) break;
    ahead.settle(owner, granted, granted); // the first page failed: all wasted
    moved += granted;
  }
  return moved;
}

Deno.test("an account idle for an hour has its allowance back, and no more than it", () => {
  const clock = new ManualClock(0);
  const ahead = new SearchAhead(() => clock.now());
  assert.equal(drain(ahead, "a"), AHEAD_ALLOWANCE);
  clock.advance(3600_000); // 360 refills' worth of time
  assert.equal(ahead.grant("a", "search DE", 6000, 400), AHEAD_ALLOWANCE, "one search: the cap");
  clock.advance(3600_000);
  assert.equal(drain(ahead, "a"), AHEAD_ALLOWANCE, "wasting after an hour idle: the cap again");
});

Deno.test("a part-refilled allowance grants whole pages only", () => {
  const clock = new ManualClock(0);
  const ahead = new SearchAhead(() => clock.now());
  assert.equal(drain(ahead, "a"), AHEAD_ALLOWANCE);
  clock.advance(REFILL_MS / 10); // a tenth of a page
  assert.equal(ahead.grant("a", "search DE", 120, 4), 0, "a tenth of a page is no page");
  clock.advance(REFILL_MS / 2); // six tenths
  assert.equal(ahead.grant("a", "search DE", 120, 4), 0);
  clock.advance(REFILL_MS / 2); // eleven tenths: one page, and a tenth left over
  assert.equal(ahead.grant("a", "search DE", 200, 4), 1);
  assert.equal(ahead.grant("a", "search DE", 200, 4), 0, "the tenth left is no page");
  clock.advance(REFILL_MS * 9 / 10); // one page again
  assert.equal(ahead.grant("a", "search DE", 200, 4), 1);
});
