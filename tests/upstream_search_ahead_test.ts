/** The allowance of search pages fetched with the first one (upstream/search_ahead.ts). */
import assert from "node:assert/strict";
import { AHEAD_ALLOWANCE, REFILL_MS, SearchAhead } from "../upstream/search_ahead.ts";

Deno.test("pages fetched ahead follow the items a limit needs over the pages the account last saw", () => {
  const ahead = new SearchAhead(() => 0);
  assert.equal(ahead.grant("a", "search DE", 0, 4), 0, "limit=0 is one page");
  assert.equal(ahead.grant("a", "search DE", 60, 4), 0, "one 60-item page may hold it");
  assert.equal(ahead.grant("b", "search DE", 200, 4), 3, "four 60-item pages");
  ahead.sawFullPage("c", "search DE", 16);
  assert.equal(ahead.grant("c", "search DE", 40, 4), 2, "three 16-item pages");
  assert.equal(ahead.grant("c", "search DE", 200, 4), 4, "never more than asked at once");
  assert.equal(ahead.grant("c", "search US", 200, 4), 3, "each marketplace its own");
  ahead.sawFullPage("c", "search US", 500);
  assert.equal(ahead.grant("c", "search US", 200, 4), 3, "a page says at most 60 items");
});

Deno.test("one account's small pages do not size another account's limit searches (probe GD)", () => {
  const ahead = new SearchAhead(() => 0);
  ahead.sawFullPage("attacker", "search DE", 16);
  assert.equal(ahead.grant("victim", "search DE", 60, 4), 0, "one 60-item page may hold it");
  assert.equal(ahead.grant("attacker", "search DE", 60, 4), 3, "its own guess is its own");
});

Deno.test("pages wasted are taken from the account's allowance, which refills slowly; pages used come back", () => {
  let now = 0;
  const ahead = new SearchAhead(() => now);
  let moved = 0;
  for (let i = 0; i < 10; i++) {
    const granted = ahead.grant("attacker", "search DE", 200, 4);
    ahead.settle("attacker", granted, granted); // the first page failed: all wasted
    moved += granted;
  }
  assert.equal(moved, AHEAD_ALLOWANCE);
  assert.equal(ahead.grant("attacker", "search DE", 200, 4), 0);
  now += REFILL_MS;
  assert.equal(ahead.grant("attacker", "search DE", 200, 4), 1, "one page a refill");

  for (let i = 0; i < 100; i++) {
    const granted = ahead.grant("honest", "search DE", 200, 4);
    assert.equal(granted, 3);
    ahead.settle("honest", granted, 0); // every page used
  }
  assert.equal(ahead.grant("other", "search DE", 200, 4), 3, "accounts do not share");
});

Deno.test("the allowance forgets the least recently seen accounts past its bound", () => {
  const ahead = new SearchAhead(() => 0);
  const spend = (owner: string) => ahead.settle(owner, ahead.grant(owner, "s", 200, 4), 3);
  for (let i = 0; i < 4; i++) spend("first");
  assert.equal(ahead.grant("first", "s", 200, 4), 0);
  for (let i = 0; i < 10_000; i++) ahead.grant(`acct${i}`, "s", 200, 4);
  assert.equal(ahead.grant("first", "s", 200, 4), 3, "forgotten, so full again");
});

Deno.test("pages given back never raise the allowance past its size, and a page of no items sizes nothing (probe GV)", () => {
  let now = 0;
  const ahead = new SearchAhead(() => now);
  // Honest searches give back every page, many times over: the allowance stays at its size.
  for (let i = 0; i < 50; i++) ahead.settle("a", 4, 0);
  let moved = 0;
  for (let i = 0; i < 20; i++) {
    const granted = ahead.grant("a", "search DE", 200, 4);
    ahead.settle("a", granted, granted); // all wasted
    moved += granted;
  }
  assert.equal(moved, AHEAD_ALLOWANCE, "no more wasted pages than the allowance");
  // A page with a next page but no results (an empty page the marketplace still paginates) does
  // not make the account's pages "0 items", which would ask for every page at once.
  now += 100 * REFILL_MS;
  ahead.sawFullPage("b", "search DE", 16);
  ahead.sawFullPage("b", "search DE", 0);
  assert.equal(ahead.grant("b", "search DE", 40, 4), 2, "still three 16-item pages");
});
