/** The soft interstitial's form, read off the two real ones in the corpus (issue 16.5). */
import assert from "node:assert/strict";
import { interstitialForm } from "../parsers/soft_interstitial.ts";
import { detectPage } from "../parsers/detect.ts";
import { fixture } from "./fixture.ts";

Deno.test("interstitialForm() reads action, return path and pre-filled keywords of both corpus interstitials", async () => {
  const akeel = interstitialForm(
    await fixture("blocked/amazon.com__akeel-soft-interstitial-dp.html"),
  );
  assert.deepEqual(akeel, {
    action: "/errors/validateCaptcha",
    fields: [
      ["amzn", "koOG0J3sSQ5hjQ5HGA7n1g=="],
      ["amzn-r", "/JOINICE-Century-Furniture-Storage-Matching/dp/B0G2XQKDCF"],
      ["field-keywords", "TUGBHH"],
    ],
  });
  const msheraz = interstitialForm(await fixture("blocked/amazon.com__msheraz-captcha.html"));
  assert.equal(msheraz?.action, "/errors/validateCaptcha");
  assert.deepEqual(msheraz?.fields.find(([n]) => n === "field-keywords"), [
    "field-keywords",
    "NCHYGH",
  ]);
});

Deno.test("interstitialForm() gives null for a captcha that must be solved, and for a form that leaves the host", async () => {
  assert.equal(interstitialForm(await fixture("blocked/amazon.de__epic-captcha.html")), null);
  assert.equal(interstitialForm(await fixture("blocked/amazon.com__app-robot-check.html")), null);
  const page = await fixture("blocked/amazon.com__akeel-soft-interstitial-dp.html");
  const away = page.replace(
    'action="/errors/validateCaptcha"',
    'action="//evil.example/errors/validateCaptcha"',
  );
  assert.notEqual(away, page);
  assert.equal(interstitialForm(away), null);
});

Deno.test("a captcha whose field-keywords is written with an empty value asks for characters: a captcha, not a soft interstitial", async () => {
  // The real captchas write no value; one that writes it empty, after the name, is no answer
  // given in advance either.
  const page = await fixture("blocked/amazon.de__epic-captcha.html");
  const empty = page.replace('name="field-keywords"', 'name="field-keywords" value=""');
  assert.notEqual(empty, page);
  assert.deepEqual(detectPage(page), { kind: "blocked", reason: "captcha" });
  assert.deepEqual(detectPage(empty), { kind: "blocked", reason: "captcha" });
  const filled = page.replace('name="field-keywords"', 'name="field-keywords" value="TUGBHH"');
  assert.deepEqual(detectPage(filled), { kind: "blocked", reason: "soft_interstitial" });
});
