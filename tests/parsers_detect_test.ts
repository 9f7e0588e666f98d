import assert from "node:assert/strict";
import { detectPage } from "../parsers/detect.ts";
import { evalKilledAfter } from "./child_eval.ts";
import { fixture, fixtureNames } from "./fixture.ts";
import { parseHtml } from "../parsers/dom.ts";
import * as handbuilt from "./handbuilt_pages.ts";

const FOLDERS = [
  "bestsellers",
  "offers",
  "product",
  "promotion",
  "reviews",
  "search",
  "seller_products",
];

// MANIFEST files weih-B003EM8008-p3837 as a product-reviews page, but the capture is a single
// review (/gp/customer-reviews/R12J0UJC4DRYLC, title "Amazon Customer's review of …"), so the
// detector names it "review": the registry then hands it to the single-review parser.
const EXCEPTIONS: Record<string, string> = {
  "reviews/amazon.com__weih-B003EM8008-p3837.html": "review",
};

Deno.test("detectPage() names every corpus page by its folder", async () => {
  for (const folder of FOLDERS) {
    for (const name of fixtureNames(folder)) {
      const got = detectPage(await fixture(name));
      assert.deepEqual(got, { kind: "page", type: EXCEPTIONS[name] ?? folder }, name);
    }
  }
});

Deno.test("detectPage() names the reason of every corpus block page", async () => {
  const expected: Record<string, string> = {
    "blocked/amazon.com__app-robot-check.html": "robot_check",
    "blocked/amazon.com__cagan-dogs-of-amazon-503.html": "service_unavailable",
    // Read off the page: "Click the button below to continue shopping" over a form whose hidden
    // field-keywords is filled in (NCHYGH) — the soft interstitial, not a captcha to solve.
    "blocked/amazon.com__msheraz-captcha.html": "soft_interstitial",
    "blocked/amazon.de__epic-503-tut-uns-leid.html": "service_unavailable",
    "blocked/amazon.de__epic-captcha.html": "captcha",
    "blocked/amazon.de__epic-reviews-signin-wall.html": "signin_wall",
    "blocked/amazon.in__akanil-signin.html": "signin_wall",
    // MANIFEST: "'Click the button below to continue shopping' soft interstitial (opfcaptcha,
    // form GET /errors/validateCaptcha with amzn + amzn-r=/JOINICE-.../dp/B0G2XQKDCF + field-keywords)".
    "blocked/amazon.com__akeel-soft-interstitial-dp.html": "soft_interstitial",
    // MANIFEST: "Sign-in wall served for /product-reviews/B08PP5MSVB (ue_pty AuthenticationPortal)".
    "blocked/amazon.com__wk-reviews-signin-wall-B08PP5MSVB.html": "signin_wall",
  };
  const names = fixtureNames("blocked");
  assert.deepEqual(names, Object.keys(expected).sort());
  for (const name of names) {
    assert.deepEqual(
      detectPage(await fixture(name)),
      { kind: "blocked", reason: expected[name] },
      name,
    );
  }
});

// Hand-built: no real capture of these page types exists in the corpus.
Deno.test("detectPage() names the hand-built deals, deal, seller, promotion and 404 pages", () => {
  assert.deepEqual(detectPage(handbuilt.DEALS_PAGE), { kind: "page", type: "deals" });
  assert.deepEqual(detectPage(handbuilt.DEAL_PRODUCTS_PAGE), {
    kind: "page",
    type: "deal_products",
  });
  assert.deepEqual(detectPage(handbuilt.SELLER_PROFILE_PAGE), {
    kind: "page",
    type: "seller_profile",
  });
  assert.deepEqual(detectPage(handbuilt.PROMOTION_PAGE), { kind: "page", type: "promotion" });
  assert.deepEqual(detectPage(handbuilt.NOT_FOUND_PAGE), { kind: "not_found" });
});

Deno.test("detectPage() recognises captcha pages in other languages and says unknown otherwise", () => {
  const fr =
    "<html><body><h4>Saisissez les caractères que vous voyez ci-dessous</h4></body></html>";
  assert.deepEqual(detectPage(fr), { kind: "blocked", reason: "captcha" });
  assert.deepEqual(detectPage(""), { kind: "unknown" });
  assert.deepEqual(detectPage("not html"), { kind: "unknown" });
  assert.deepEqual(detectPage("<html><body><p>hello</p></body></html>"), { kind: "unknown" });
});

Deno.test("detectPage() takes 'Something went wrong' in a script for no block: only a title says so", async () => {
  // The assistant widget's settings on current pages of every type (soko-B07FNW9FGJ, 2025), in a
  // page this detector does not know: such a page was a block, retried and counted towards the
  // marketplace's pause.
  const html = await fixture("product/amazon.com__soko-B07FNW9FGJ.html");
  const setting = /"rufusErrorMessageText":"[^"]*"/.exec(html)![0];
  assert.match(setting, /Something went wrong/);
  const page = `<html><head><title>Amazon.com Help</title></head><body>` +
    `<script>var p = {${setting}};</script><p>Help topics</p></body></html>`;
  assert.deepEqual(detectPage(page), { kind: "unknown" });
});

Deno.test("detectPage() stays cheap on the largest corpus pages: a small share of one DOM parse", async () => {
  const html = await fixture("product/amazon.com__wk-B0BN72FYFG-renewed.html");
  const search = await fixture("search/amazon.fr__imen-headphones.html");
  // Against a DOM parse of the same pages, interleaved in the same run, so that a loaded machine
  // slows both alike (an absolute bound of 5 ms failed under load). Measured: 0.05.
  let detecting = 0;
  let parsing = 0;
  for (let i = 0; i < 10; i++) {
    let start = performance.now();
    detectPage(html), detectPage(search);
    detecting += performance.now() - start;
    start = performance.now();
    parseHtml(html), parseHtml(search);
    parsing += performance.now() - start;
  }
  assert.ok(detecting / parsing < 0.25, `detection took ${detecting / parsing} of a DOM parse`);
});

Deno.test("detectPage() reads a tag full of page-type tokens once (probe EW: quadratic, minutes per page)", async () => {
  // In a child process, killed after 20 s: each token re-read its whole tag, so 2 MB of them held
  // the thread for many minutes, timers and all.
  const code = `
    import { detectPage } from ${JSON.stringify(import.meta.resolve("../parsers/detect.ts"))};
    import { fixture } from ${JSON.stringify(import.meta.resolve("./fixture.ts"))};
    const page = await fixture("product/amazon.com__app-B07H57DNVV.html");
    const tag = '<meta name="x" content="' + "pageType=Search ".repeat(130_000) + '">';
    const links = '<a href="/s?k=x" data-y="' + "pageType=Search ".repeat(1000) + '">x</a>';
    console.log(JSON.stringify(detectPage(tag + links.repeat(50) + page)));`;
  const { stdout, stderr } = await evalKilledAfter(code);
  assert.equal(stdout, JSON.stringify({ kind: "page", type: "product" }), stderr);
});

Deno.test("detectPage() finds a link's page-type token however many tokens of the tag's other attributes come first (probe EX)", () => {
  const tag = (n: number) =>
    `<html><body><span class="a-declarative" data-note="${"pageType=Search ".repeat(n)}" ` +
    `data-a-modal='{"url":"/gp/glow/get-address-selections.html?pageType=Detail"}'>x</span>` +
    "</body></html>";
  for (const n of [1, 17, 5000]) {
    assert.deepEqual(detectPage(tag(n)), { kind: "page", type: "product" }, `${n} before it`);
  }
});
