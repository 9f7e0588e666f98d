/**
 * The steps of the "Deliver to" flow (upstream/delivery_location.ts), each checked on its own:
 * an error status or a robot check at any of the four steps is a LocationBlocked (retried on a
 * fresh session, never the postcode refused), robot-kind for a 503 or 429 so that the client is
 * told the marketplace is blocking; the pop-over's token falls back to the home page's; an
 * address-change answer too large to be the JSON it should be is not read; and the rules by which
 * a displayed location matches a postcode hold at their edges. The suite let each of these go.
 *
 * `applyDeliveryLocation` runs against a scripted marketplace at its `send` seam: the real
 * amazon.ca home page from the corpus (its pop-over token, "Waterloo N2V 0G"), and one step's
 * answer replaced at a time. One test runs the same through Shelf and the fake marketplace.
 */
import assert from "node:assert/strict";
import {
  applyDeliveryLocation,
  LocationBlocked,
  locationMatches,
  PostcodeRefused,
  type Send,
  type Sent,
} from "../upstream/delivery_location.ts";
import { fixtureBytes } from "./fixture.ts";
import { startRig } from "./upstream_harness.ts";

const HOME = await fixtureBytes("categories/amazon.ca__amzorders-homepage-searchdropdown.html");
// The pop-over token the saved page carries in its data-a-modal.
const PAGE_TOKEN = "hMNvi0cVinVGqwBC60WmuhdWOA1IgKL+IQ38TYM9NHVYAAAAAGhJ8D4AAAAB";
const ZIP = "N2V 0G4"; // shown as "Waterloo N2V 0G"
const enc = new TextEncoder();

type Step = "home" | "modal" | "change" | "after";
type Answer = { status?: number; body?: string | Uint8Array };

/** The marketplace's four answers, any replaced; records what Shelf sent. */
function marketplace(replaced: Partial<Record<Step, Answer>> = {}) {
  const requests: { step: Step; url: string; init: Parameters<Send>[1] }[] = [];
  let homes = 0;
  const send: Send = (url, init) => {
    const step: Step = url.includes("/get-rendered-address-selections")
      ? "modal"
      : url.includes("/address-change")
      ? "change"
      : homes++ === 0
      ? "home"
      : "after";
    requests.push({ step, url, init });
    const answer: Required<Answer> = {
      home: { status: 200, body: HOME },
      modal: { status: 200, body: `<script>var CSRF_TOKEN : "MODAL";</script>` },
      change: { status: 200, body: JSON.stringify({ isValidAddress: 1, isAddressUpdated: 1 }) },
      after: { status: 200, body: HOME },
    }[step];
    const { status, body } = { ...answer, ...replaced[step] };
    const sent: Sent = {
      status,
      headers: new Headers({ "content-type": "text/html" }),
      body: typeof body === "string" ? enc.encode(body) : body,
    };
    return Promise.resolve(sent);
  };
  return { send, requests };
}

Deno.test("the flow gets through against the saved home page, with the pop-over's token on the address change", async () => {
  const m = marketplace();
  await applyDeliveryLocation(m.send, "CA", ZIP);
  assert.deepEqual(m.requests.map((r) => r.step), ["home", "modal", "change", "after"]);
  assert.equal(m.requests[1].init.headers?.["anti-csrftoken-a2z"], PAGE_TOKEN);
  assert.equal(m.requests[2].init.headers?.["anti-csrftoken-a2z"], "MODAL");
});

Deno.test("an address change whose pop-over shows no token carries the home page's", async () => {
  const m = marketplace({ modal: { body: "<div>no token here</div>" } });
  await applyDeliveryLocation(m.send, "CA", ZIP);
  const change = m.requests.find((r) => r.step === "change")!;
  assert.equal(change.init.method, "POST");
  assert.equal(change.init.headers?.["anti-csrftoken-a2z"], PAGE_TOKEN);
});

Deno.test("a 503 or 429 at any step is a robot-kind LocationBlocked; a 400 or 404 a plain failed step", async () => {
  // Each answer's body is one that would otherwise let the flow through: only its status fails it.
  const bodies: Record<Step, string | Uint8Array> = {
    home: HOME,
    modal: `<script>var CSRF_TOKEN : "MODAL";</script>`,
    change: JSON.stringify({ isValidAddress: 1 }),
    after: HOME,
  };
  for (const [status, robot] of [[503, true], [429, true], [400, false], [404, false]] as const) {
    for (const step of ["home", "modal", "change", "after"] as const) {
      const m = marketplace({ [step]: { status, body: bodies[step] } });
      await assert.rejects(applyDeliveryLocation(m.send, "CA", ZIP), (e: unknown) => {
        assert.ok(e instanceof LocationBlocked, `HTTP ${status} at ${step}: ${e}`);
        assert.equal(e.robot, robot, `HTTP ${status} at ${step}: ${e.message}`);
        assert.match(e.message, new RegExp(`HTTP ${status}`));
        return true;
      });
      assert.equal(m.requests.at(-1)!.step, step, "no step after the one that failed");
    }
  }
});

Deno.test("an address-change answer over 256 KiB is not read as JSON: no refusal is taken from it", async () => {
  const big = JSON.stringify({ isValidAddress: 0, pad: "x".repeat(300 * 1024) });
  // The page after the change shows the postcode: accepted.
  await applyDeliveryLocation(marketplace({ change: { body: big } }).send, "CA", ZIP);
  const small = marketplace({ change: { body: JSON.stringify({ isValidAddress: 0 }) } });
  await assert.rejects(applyDeliveryLocation(small.send, "CA", ZIP), PostcodeRefused);
});

Deno.test("a postcode's first part of one character is not looked for alone", () => {
  assert.ok(!locationMatches("Somewhere A 5", "A 1BC"));
  assert.ok(locationMatches("London E1 6", "E1 6AN"), "two characters are");
});

Deno.test("a postcode shown across up to four words matches written whole; five words are never joined", () => {
  assert.ok(locationMatches("Town 12 34 56", "123456"));
  assert.ok(locationMatches("Town 1 2 3 4", "1234"));
  assert.ok(!locationMatches("Town 1 2 3 4 5", "12345"));
});

Deno.test("only the first 64 words of a displayed location are read", () => {
  const words = Array.from({ length: 70 }, (_, i) => `w${i}`);
  assert.ok(!locationMatches([...words, "10001"].join(" "), "10001"));
  assert.ok(locationMatches([...words.slice(0, 63), "10001"].join(" "), "10001"));
});

Deno.test("a 429 at the home page or the pop-over reaches the client as a robot check: an uncharged 503", async () => {
  for (const step of ["home", "modal"] as const) {
    await using rig = await startRig();
    rig.fake.page(
      "https://www.amazon.com/dp/B07H57DNVV",
      "product/amazon.com__app-B07H57DNVV.html",
    );
    rig.fake.flowFailures.push({ step, status: 429, times: 100 });
    const r = await rig.call("/v1/products/details?asin=B07H57DNVV&zip=10001");
    assert.equal(r.status, 503, `429 at ${step}: ${JSON.stringify(r.body)}`);
    assert.equal((r.body.error as { code: string }).code, "upstream_blocked", step);
    assert.equal(r.headers.get("x-credits-cost"), "0", step);
    assert.equal(rig.fake.requests.filter((q) => q.method === "POST").length, 0, step);
  }
});
