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

/** Cleans every string in `value` (cleanText), keys included, in place; returns `value`. */
export function withoutControlChars<T>(value: T): T {
  clean(value);
  return value;
}

function clean(value: unknown): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "string") {
        if (!isClean(v)) value[i] = cleanText(v);
      } else if (v && typeof v === "object") clean(v);
    }
  } else if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (typeof v === "string") {
        if (!isClean(v)) o[k] = cleanText(v);
      } else if (v && typeof v === "object") clean(v);
      if (!isClean(k)) {
        const kept = o[k];
        delete o[k];
        o[cleanText(k)] = kept;
      }
    }
  }
}
