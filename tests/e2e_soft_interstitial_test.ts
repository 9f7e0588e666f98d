/**
 * The soft interstitial ("Click the button below to continue shopping", issue 16.5): passed the
 * way a browser passes it, by submitting its form once on the same session, which leads back to
 * the page asked for; when the form leads to another block page, the call gives up like any
 * block, uncharged. The fake marketplace serves the corpus's real interstitial (its return path
 * edited to the page asked for) and checks the form's own fields.
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";

const DETAILS = "/v1/products/details?asin=B07H57DNVV";

Deno.test("a soft interstitial is passed by submitting its form once on the same session", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  rig.fake.fail("soft", 1, "/dp/");
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.asin, "B07H57DNVV");
  const asked = rig.fake.requests.filter((q) => q.path !== "/");
  assert.deepEqual(asked.map((q) => q.path.split("?")[0]), [
    "/dp/B07H57DNVV",
    "/errors/validateCaptcha",
    "/dp/B07H57DNVV",
  ]);
  const form = new URLSearchParams(asked[1].path.split("?")[1]);
  assert.equal(form.get("amzn-r"), "/dp/B07H57DNVV");
  assert.equal(form.get("field-keywords"), "TUGBHH");
  // One session throughout: the form went with the cookie the first answer set.
  const session = (c: string) => /session-id=([^;]+)/.exec(c)?.[1];
  assert.ok(session(asked[1].cookie), "the form carries the session cookie");
  assert.equal(session(asked[1].cookie), session(asked[2].cookie));
});

Deno.test("an interstitial that keeps coming back: the form is tried once, then an uncharged 503", async () => {
  await using rig = await startRig();
  rig.fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  rig.fake.fail("soft", 10, "/dp/");
  const r = await rig.call(DETAILS);
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.equal((r.body.error as { code: string }).code, "upstream_blocked");
  assert.match(String((r.body.error as { message: string }).message), /soft interstitial/);
  assert.equal(r.headers.get("x-credits-cost"), "0");
  assert.equal(rig.fake.pageRequests("/errors/validateCaptcha"), 1);
});
