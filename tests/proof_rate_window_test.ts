/**
 * Proof 2, exact rate window: a key limited to L calls a second, driven by 20 connections for
 * 5 s, is admitted at most L calls in every whole second, and at least L in every whole second
 * while the demand lasts (no under-admission). Seconds are the client's wall clock (why not the
 * Date header: rate_windows.ts); the partial seconds at start and end are only held to the upper
 * bound.
 */
import assert from "node:assert/strict";
import { PRODUCT_PATH, productShelf } from "./proof/product_shelf.ts";
import { usedCredits } from "./proof/admin_client.ts";
import { hit, json, tally, tallyText } from "./proof/http.ts";
import { drive } from "./proof/load.ts";
import { perSecond } from "./proof/rate_windows.ts";
import { errorShapeProblem } from "./proof/error_shape.ts";
import { report } from "./proof/figures.ts";

const LIMIT = 5;
const CONNECTIONS = 20;
const SECONDS = 5;

Deno.test("perSecond() places a call straddling a boundary where the limit allows, and flags a full second", () => {
  const at = (s: number, ms: number) => ({ sentAt: s * 1000 + ms, doneAt: s * 1000 + ms + 2 });
  const calls = [at(10, 1), at(10, 2), { sentAt: 10_999, doneAt: 11_001 }, at(11, 5)];
  assert.deepEqual(perSecond(calls, 3).seconds.map((s) => s.admitted), [3, 1]);
  assert.deepEqual(perSecond(calls, 2).seconds.map((s) => s.admitted), [2, 2]);
  assert.deepEqual(perSecond([at(10, 1), at(10, 2), at(10, 3)], 2).seconds.map((s) => s.admitted), [
    3,
  ]);
});

Deno.test(`proof: a key limited to ${LIMIT}/s under ${CONNECTIONS} connections for ${SECONDS} s gets exactly ${LIMIT} per whole second`, async () => {
  await using shelf = await productShelf(10_000, LIMIT);
  const { server, key } = shelf;
  // Warm the result cache and the connection pool, so that the first second is not a cold one.
  assert.equal((await hit(server.url, PRODUCT_PATH, key)).status, 200);
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 300));
  const start = Date.now();
  const answers = await drive({
    connections: CONNECTIONS,
    untilMs: start + SECONDS * 1000,
    maxCalls: 200_000,
    send: () => hit(server.url, PRODUCT_PATH, key),
  });
  const end = Date.now();
  const admitted = answers.filter((a) => a.status === 200)
    .map((a) => ({ sentAt: a.sentAt, doneAt: a.doneAt }));
  const { seconds, straddling } = perSecond(admitted, LIMIT);
  // Whole seconds of demand: those entirely between the first request and the last one sent.
  const whole = seconds.filter((s) => s.second * 1000 >= start && (s.second + 1) * 1000 <= end);
  const counts = tally(answers);
  const others = answers.filter((a) => a.status !== 200 && a.status !== 429);
  const badShape = answers.filter((a) =>
    a.status === 429 &&
    (errorShapeProblem(429, json(a)) || a.headers.get("retry-after") !== "1")
  );
  const used = await usedCredits(server.url, key);
  const figures = {
    limit: LIMIT,
    connections: CONNECTIONS,
    calls: answers.length,
    "admitted per second": seconds.map((s) => s.admitted).join(" "),
    "whole seconds": whole.length,
    straddling,
    answers: tallyText(counts),
    usage: used - 1,
  };
  console.log(figures);
  for (const s of seconds) {
    assert.ok(s.admitted <= LIMIT, `second ${s.second} admitted ${s.admitted} > ${LIMIT}`);
  }
  assert.ok(whole.length >= SECONDS - 1, `too few whole seconds of demand: ${whole.length}`);
  for (const s of whole) {
    assert.equal(
      s.admitted,
      LIMIT,
      `whole second ${s.second} admitted ${s.admitted}, not ${LIMIT}`,
    );
  }
  assert.deepEqual(others.map((a) => a.status), [], "only 200 and 429");
  assert.equal(counts.get("429 rate_limited"), answers.length - admitted.length);
  assert.equal(
    badShape.length,
    0,
    `429 without the spec's body or Retry-After: 1: ${badShape[0]?.text}`,
  );
  assert.equal(
    used - 1,
    admitted.length,
    "credits used must equal the admitted calls (plus the warm-up)",
  );
  report("2. rate window", figures);
});
