/**
 * Amazon's soft interstitial ("Click the button below to continue shopping"): a captcha page
 * whose form needs no answer, since its `field-keywords` comes filled in. A browser passes it by
 * submitting the form, which sends the shopper back to the page asked for (`amzn-r`). This reads
 * that form: its action and fields, entities decoded.
 */
import { all, attr, one, parseHtml } from "./dom.ts";

export interface InterstitialForm {
  /** The form's action: a path on the marketplace's own host (/errors/validateCaptcha). */
  action: string;
  fields: [name: string, value: string][];
}

/** The pre-filled `field-keywords` that tells a soft interstitial from a real captcha. */
export const SOFT_INTERSTITIAL =
  /<input[^>]*\bname=["']?field-keywords["']?[^>]*\bvalue=["'][^"']+["']|Click the button below to continue shopping/i;

export function interstitialForm(html: string): InterstitialForm | null {
  const form = one(parseHtml(html), 'form[action*="validateCaptcha"]');
  if (!form) return null;
  const action = attr(form, "action");
  // Only a path on the same host: the form must not send the session anywhere else.
  if (!action.startsWith("/") || action.startsWith("//")) return null;
  const fields: [string, string][] = all(form, "input[name]").map((i) => [
    attr(i, "name"),
    attr(i, "value"),
  ]);
  if (!fields.some(([n, v]) => n === "field-keywords" && v)) return null;
  return { action, fields };
}
