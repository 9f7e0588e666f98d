/**
 * Proof 3, faults: with the fake marketplace failing 30% of page requests (robot check, 503,
 * reset connection, a page slower than the timeout), credits used equal the number of 200s, no
 * answer is a 500 or any status outside the spec's, and every error has the spec's shape.
 * In-process (startRig) rather than a child process, because only there can the browser
 * transport's timeout and backoff be shortened; the HTTP, the KV file and the upstream path are
 * the real ones.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";
import { Plans } from "../metering/plans.ts";
import { GROUPS } from "../schemas/endpoints.ts";
import { hit, json, tally, tallyText } from "./proof/http.ts";
import { errorShapeProblem } from "./proof/error_shape.ts";
import { runSeed, seeded } from "./proof/prng.ts";
import { drive } from "./proof/load.ts";
import { report, scaled } from "./proof/figures.ts";
import { scanForSecrets } from "./proof/secrets.ts";

const CALLS = scaled(1_000, 400);
const FIXTURE = "product/amazon.com__app-B07H57DNVV.html";
/** What an upstream failure may become (INTERFACE.md, step 7); anything else is a failed proof. */
const ALLOWED = new Set([
  "200",
  "502 upstream_error",
  "503 upstream_blocked",
  "504 upstream_timeout",
]);

Deno.test(`proof: ${CALLS} calls against a marketplace failing 30% of requests charge exactly the 200s`, async () => {
  const seed = runSeed();
  const plans = new Plans([{
    id: "proof",
    credits: 1_000_000,
    rate_limit_per_sec: 100_000,
    max_keys: 10,
    groups: [...GROUPS],
  }]);
  await using rig = await startRig({
    plan: "proof",
    plans,
    browser: { timeoutMs: 400, retries: 2, backoffMs: 5 },
  });
  rig.fake.slowMs = 1_500;
  // A distinct ASIN per call, so that every call goes upstream (no cache, no shared flight).
  const asins = Array.from({ length: CALLS }, (_, i) => `B0PRF${String(i).padStart(5, "0")}`);
  for (const a of asins) rig.fake.page(`https://www.amazon.com/dp/${a}`, FIXTURE);
  rig.fake.failRandomly(0.3, ["503", "robot", "reset", "slow"], seeded(seed));

  const started = performance.now();
  const answers = await drive({
    connections: 20,
    untilMs: Date.now() + 120_000,
    maxCalls: CALLS,
    send: (n) => hit(rig.server.url, `/v1/products/details?asin=${asins[n]}`, rig.key),
  });
  const ms = Math.round(performance.now() - started);
  const counts = tally(answers);
  const ok = answers.filter((a) => a.status === 200).length;
  const outside = [...counts.keys()].filter((k) => !ALLOWED.has(k));
  const shapes = answers.filter((a) => a.status !== 200).map((a) =>
    errorShapeProblem(a.status, json(a))
  ).filter(Boolean);
  const charged = answers.filter((a) =>
    a.status !== 200 && a.headers.get("x-credits-cost") !== "0"
  );
  const used = (await rig.call("/v1/usage")).body.requests_used as number;
  const scan = await scanForSecrets({
    keys: [rig.key],
    kvPaths: [rig.server.kvPath],
    logs: [rig.server.errors.join("\n")],
    bodies: answers.filter((a) => a.status !== 200).map((a) => a.text),
  });
  const requests = rig.fake.pageRequests("/dp/");
  const injected = Object.values(rig.fake.injected).reduce((a, b) => a + b, 0);
  const figures = {
    seed,
    calls: answers.length,
    "upstream page requests": requests,
    "failed upstream": `${injected} (${Math.round((100 * injected) / requests)}%: ${
      Object.entries(rig.fake.injected).map(([k, v]) => `${k} ${v}`).join(", ")
    })`,
    answers: tallyText(counts),
    "200s": ok,
    usage: used,
    "server log lines": rig.server.errors.length,
    ms,
  };
  console.log(figures);
  assert.equal(answers.length, CALLS);
  assert.deepEqual(outside, [], `answers outside the spec: ${tallyText(counts)}`);
  assert.deepEqual(shapes, [], "every error in the spec's shape");
  assert.equal(charged.length, 0, "an error answer claims a charge");
  assert.equal(used, ok, "credits used must equal the number of 200s");
  assert.ok(
    injected / requests > 0.2,
    "the fake must really have failed a large share of requests",
  );
  assert.deepEqual(scan.hits, [], "a key value leaked");
  report("3. faults (30% upstream failures)", figures);
});
