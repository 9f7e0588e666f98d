/**
 * Deadlines the README documents: a request body must arrive whole within 10 s (then 408; the
 * OpenAPI document says so too), and reading one page stops with PageTooCostly once its time
 * (parsers/page_budget.ts) has passed, not at some later multiple of it. Raw HTTP/1.1 over TCP,
 * so that a body can be left unfinished; the page budget is read with a small deadline.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { statusWithin, unfinished } from "./unfinished_body.ts";
import { checkTime, PageTooCostly, spendText, withinBudget } from "../parsers/page_budget.ts";

/** Blocks this thread for `ms`, as a page read that takes long does. */
function busyFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

Deno.test("a request body still arriving after 10 s is answered 408, as the OpenAPI document says", async () => {
  await using s = await startServer();
  const doc = await (await s.get("/openapi.json")).text();
  assert.ok(doc.includes("did not arrive within 10 seconds"), "the documented 10 s");
  assert.ok(!/did not arrive within (?!10 )\d+ seconds/.test(doc), "no other figure");

  const { key } = await s.account("starter");
  const u = await unfinished(s.url, "/v1/watches", [
    `x-api-key: ${key}`,
    "Content-Type: application/json",
  ]);
  try {
    assert.equal(await statusWithin(u, 7_000), null, "still being read well inside 10 s");
    assert.equal(await statusWithin(u, 5_500), 408, "a 408 by 12.5 s");
  } finally {
    u.close();
  }
  assert.deepEqual(s.errors, []);
});

Deno.test("reading a page stops once its deadline has passed, not at a later multiple of it", () => {
  const ms = 300;
  let checkedInTime = false;
  assert.throws(
    () =>
      withinBudget({ chars: 1_000_000, ms }, () => {
        spendText(["at once"]); // inside the deadline: goes on
        checkTime();
        checkedInTime = true;
        busyFor(ms + 100); // past the deadline, well before twice it
        spendText(["a little more text"]);
        return "read";
      }),
    (e) => e instanceof PageTooCostly && /longer than 300 ms/.test(e.message),
  );
  assert.ok(checkedInTime, "inside the deadline the read went on");
  // Outside a budget nothing is counted.
  busyFor(10);
  checkTime();
});
