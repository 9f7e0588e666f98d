/**
 * Amazon's soft interstitial ("Click the button below to continue shopping"): a captcha page
 * whose form needs no answer, since its `field-keywords` comes filled in. A browser passes it by
 * submitting the form, which sends the shopper back to the page asked for (`amzn-r`). This reads
 * that form: its action and fields, entities decoded.
 */
import { all, attr, one, parseHtml } from "./dom.ts";
import { before, someTag } from "./page_text.ts";
import { ParseError } from "./parse_error.ts";

export interface InterstitialForm {
  /** The form's action: a path on the marketplace's own host (/errors/validateCaptcha). */
  action: string;
  fields: [name: string, value: string][];
}

/**
 * The pre-filled `field-keywords` that tells a soft interstitial from a real captcha, or its
 * prompt. Each `<input` tag is read once, its attributes in one pass (page_text.ts's someTag): a
 * `name=…[^>]*value=…` pattern retried `[^>]*` from every "<input", and again at every `name=` of
 * a single tag the page long, quadratic either way.
 */
export function isSoftInterstitial(html: string): boolean {
  return /Click the button below to continue shopping/i.test(html) ||
    someTag(
      html,
      "input",
      (a) =>
        a.get("name")?.toLowerCase() === "field-keywords" && before(a, "name", "value") &&
        a.get("value") !== "",
    );
}

/** The form to submit, or null when the page holds none it can read (readPage calls this unguarded). */
export function interstitialForm(html: string): InterstitialForm | null {
  let doc;
  try {
    doc = parseHtml(html);
  } catch (e) {
    if (e instanceof ParseError) return null; // nested or sized past dom.ts's caps
    throw e;
  }
  const form = one(doc, 'form[action*="validateCaptcha"]');
  if (!form) return null;
  const action = attr(form, "action");
  // Only a path on the same host: the form must not send the session anywhere else ("/\\evil" is
  // "//evil" to a URL parser, so the path is judged as one reads it).
  const host = URL.parse(action, "https://same.invalid")?.host;
  if (!action.startsWith("/") || host !== "same.invalid") return null;
  const fields: [string, string][] = all(form, "input[name]").map((i) => [
    attr(i, "name"),
    attr(i, "value"),
  ]);
  if (!fields.some(([n, v]) => n === "field-keywords" && v)) return null;
  return { action, fields };
}
