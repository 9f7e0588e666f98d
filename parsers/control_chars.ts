/**
 * Control characters out of parsed answers. A hostile or broken page can put NUL, ANSI escape
 * sequences and other C0/C1 controls into any text a parser reads (titles, labels, attributes,
 * embedded JSON); they are valid in JSON but reach a customer's terminal or log as commands. Tab,
 * line feed and carriage return stay: descriptions and reviews hold line breaks. A lone surrogate
 * (half of a UTF-16 pair) becomes U+FFFD: JSON.stringify writes it as `\ud800`, which strict JSON
 * readers refuse, so one such character would make a paid answer unreadable. Run once on each
 * parser's result, where every reader's output meets, rather than in each of the many readers;
 * object keys too, as some answers are keyed by labels read off the page.
 */

// deno-lint-ignore no-control-regex -- matching control characters is this module's job
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;
// deno-lint-ignore no-control-regex -- as above
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]+/g;

/**
 * `text` without control characters and with lone surrogates replaced, cut at `maxChars` UTF-16
 * units when given (half a surrogate pair the cut leaves is replaced as well).
 */
export function cleanText(text: string, maxChars = Infinity): string {
  const kept = CONTROL.test(text) ? text.replace(CONTROLS, "") : text;
  const cut = kept.length > maxChars ? kept.slice(0, maxChars) : kept;
  return cut.isWellFormed() ? cut : cut.toWellFormed();
}

function isClean(text: string): boolean {
  return !CONTROL.test(text) && text.isWellFormed();
}

/** A parsed answer whose strings hold more characters than `withoutControlChars` allows. */
export class AnswerTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`The page's answer holds more than ${limit} characters of text.`);
    this.name = "AnswerTooLarge";
  }
}

/**
 * Cleans every string in `value` (cleanText), keys included, in place; returns `value`. Throws
 * AnswerTooLarge once the strings it has walked hold more than `maxChars` characters, counting a
 * string each time the answer holds it: a parser may put one string in many places (a heading in
 * each item of its list), which costs nothing until the answer is copied to another thread or
 * written as JSON, where each place is a copy (a 2 MB heading over 2,000 cards: 4 GB).
 */
export function withoutControlChars<T>(value: T, maxChars = Infinity): T {
  const budget = { left: maxChars, limit: maxChars };
  clean(value, budget);
  return value;
}

function spend(budget: { left: number; limit: number }, n: number): void {
  budget.left -= n;
  if (budget.left < 0) throw new AnswerTooLarge(budget.limit);
}

function clean(value: unknown, budget: { left: number; limit: number }): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "string") {
        spend(budget, v.length);
        if (!isClean(v)) value[i] = cleanText(v);
      } else if (v && typeof v === "object") clean(v, budget);
    }
  } else if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const v = o[k];
      spend(budget, k.length);
      if (typeof v === "string") {
        spend(budget, v.length);
        if (!isClean(v)) o[k] = cleanText(v);
      } else if (v && typeof v === "object") clean(v, budget);
      if (!isClean(k)) {
        const kept = o[k];
        delete o[k];
        o[cleanText(k)] = kept;
      }
    }
  }
}
