/**
 * The soft interstitial's form and prompt, on the corpus interstitials altered by one detail
 * (probe HO's S-mutants): which form is submitted, with which fields, and when the page is a
 * soft interstitial at all.
 */
import assert from "node:assert/strict";
import { interstitialForm } from "../parsers/soft_interstitial.ts";
import { detectPage } from "../parsers/detect.ts";
import { fixture } from "./fixture.ts";

const AKEEL = "blocked/amazon.com__akeel-soft-interstitial-dp.html";
const MSHERAZ = "blocked/amazon.com__msheraz-captcha.html";
const CAPTCHA_DE = "blocked/amazon.de__epic-captcha.html";

/** `page` with `from` replaced by `to`, which must occur in it. */
function altered(page: string, from: string, to: string): string {
  assert.ok(page.includes(from), from);
  return page.replace(from, to);
}

Deno.test("a soft interstitial is known by its prompt even when its field-keywords writes the value before the name", async () => {
  const page = altered(
    await fixture(MSHERAZ),
    '<input type="hidden" name="field-keywords" value="NCHYGH">',
    '<input type="hidden" value="NCHYGH" name="field-keywords">',
  );
  assert.deepEqual(detectPage(page), { kind: "blocked", reason: "soft_interstitial" });
  // The form is still read and submitted with its keywords.
  assert.deepEqual(
    interstitialForm(page)?.fields.find(([n]) => n === "field-keywords"),
    ["field-keywords", "NCHYGH"],
  );
});

Deno.test("a captcha page whose field-keywords is named in capitals and pre-filled is a soft interstitial", async () => {
  // The field's name is matched without regard to case. The German captcha has no English
  // prompt, so only the pre-filled field can show that it is a soft interstitial.
  const page = altered(
    await fixture(CAPTCHA_DE),
    'name="field-keywords"',
    'name="Field-Keywords" value="TUGBHH"',
  );
  assert.deepEqual(detectPage(page), { kind: "blocked", reason: "soft_interstitial" });
});

Deno.test("interstitialForm() submits the validateCaptcha form, not a search form before it", async () => {
  // The dogs-of-Amazon pages carry a search form with its own field-keywords; put before the
  // interstitial's form, it must not be the one sent.
  const search = '<form id="a" accept-charset="utf-8" action="/s" method="GET" role="search">' +
    '<input id="e" name="field-keywords" value="shoes"><input name="ref" type="hidden" value="nav_bb">' +
    "</form>";
  const page = await fixture(AKEEL);
  const at = page.indexOf("<form");
  assert.ok(at > 0);
  const form = interstitialForm(page.slice(0, at) + search + page.slice(at));
  assert.deepEqual(form, {
    action: "/errors/validateCaptcha",
    fields: [
      ["amzn", "koOG0J3sSQ5hjQ5HGA7n1g=="],
      ["amzn-r", "/JOINICE-Century-Furniture-Storage-Matching/dp/B0G2XQKDCF"],
      ["field-keywords", "TUGBHH"],
    ],
  });
});

Deno.test("interstitialForm() gives null for a relative action, which would post below the page asked for", async () => {
  const page = altered(
    await fixture(AKEEL),
    'action="/errors/validateCaptcha"',
    'action="errors/validateCaptcha"',
  );
  assert.equal(interstitialForm(page), null);
});

Deno.test("interstitialForm() sends a named input without a value as an empty field", async () => {
  const page = altered(
    await fixture(AKEEL),
    '<input type=hidden name="amzn" value="koOG0J3sSQ5hjQ5HGA7n1g==" />',
    '<input type=hidden name="amzn" />',
  );
  assert.deepEqual(interstitialForm(page)?.fields, [
    ["amzn", ""],
    ["amzn-r", "/JOINICE-Century-Furniture-Storage-Matching/dp/B0G2XQKDCF"],
    ["field-keywords", "TUGBHH"],
  ]);
});
