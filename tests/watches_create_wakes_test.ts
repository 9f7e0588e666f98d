/**
 * A new watch's first refresh (INTERFACE.md "Beyond the spec") is started when the watch is
 * created, not at the scheduler's next poll: over real HTTP, with the fake marketplace serving a
 * real product page. The scheduler here polls every ten minutes, so only the wake-up that
 * POST /v1/watches gives it can start the refresh within the test's (generous) wait.
 */
import assert from "node:assert/strict";
import { FAST_WATCHES, startRig } from "./upstream_harness.ts";
import { createdWatch, receiver, until } from "./webhook_receiver.ts";
import { WatchList } from "../schemas/watches.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";
/** Far past the wait below: a refresh seen within it was not started by a poll. */
const POLL_MS = 600_000;

Deno.test("watches: a watch created while the scheduler waits out a long poll is refreshed without waiting for the poll", async () => {
  await using rig = await startRig({
    watches: { ...FAST_WATCHES, scheduler: { ...FAST_WATCHES.scheduler, pollMs: POLL_MS } },
    plan: "scale",
  });
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const base = rig.server.url;
  // The loop's first pass, over an empty schedule, is over: it now sleeps for POLL_MS.
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(rig.fake.pageRequests("/dp/"), 0);

  const watch = await createdWatch(base, rig.key, hook.url, 3600);

  // Hourly: waiting for the poll, a new watch's values were first recorded up to POLL_MS late
  // (5 s in production), and a change in that time was never reported.
  const listed = await until("the new watch's first refresh", async () => {
    const r = await fetch(`${base}/v1/watches`, { headers: { "x-api-key": rig.key } });
    if (r.status !== 200) return void await r.body?.cancel(); // its list pacing: asked again
    const w = WatchList.parse(await r.json()).watches.find((x) => x.id === watch.id);
    return w && w.refreshes >= 1 ? w : undefined;
  }, 30_000);
  assert.equal(listed.refreshes, 1);
  assert.equal(rig.fake.pageRequests("/dp/B07H57DNVV"), 1);
  assert.equal((await rig.call("/v1/usage")).body.requests_used, 1, "charged as a details call");
});
