/**
 * Deadlines the README documents: a request body must arrive whole within 10 s (then 408; the
 * OpenAPI document says so too), and reading one page stops with PageTooCostly once its time
 * (parsers/page_budget.ts) has passed, not at some later multiple of it. Raw HTTP/1.1 over TCP,
 * so that a body can be left unfinished; the page budget is read with a small deadline.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { checkTime, PageTooCostly, spendText, withinBudget } from "../parsers/page_budget.ts";

/** Sends a request whose chunked body starts and never ends; resolves to the answer's status. */
async function unfinished(url: string, path: string, headers: string[]) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(url).port) });
  const head = [`POST ${path} HTTP/1.1`, "Host: a", ...headers, "Transfer-Encoding: chunked"];
  await conn.write(new TextEncoder().encode(`${head.join("\r\n")}\r\n\r\n5\r\n{"a":\r\n`));
  const buf = new Uint8Array(4096);
  const answer = conn.read(buf).then((n) => {
    if (n === null) return 0;
    const m = /^HTTP\/1\.1 (\d{3})/.exec(new TextDecoder().decode(buf.subarray(0, n)));
    return m ? Number(m[1]) : -1;
  }, () => 0);
  return {
    answer,
    close() {
      try {
        conn.close();
      } catch { /* closed */ }
    },
  };
}

/** `p`'s value, or null when it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

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
    assert.equal(await within(u.answer, 7_000), null, "still being read well inside 10 s");
    assert.equal(await within(u.answer, 5_500), 408, "a 408 by 12.5 s");
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
