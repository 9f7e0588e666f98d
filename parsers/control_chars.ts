/**
 * Control characters out of parsed answers. A hostile or broken page can put NUL, ANSI escape
 * sequences and other C0/C1 controls into any text a parser reads (titles, attributes, embedded
 * JSON); they are valid in JSON but reach a customer's terminal or log as commands. Tab, line feed
 * and carriage return stay: descriptions and reviews hold line breaks. Run once on each parser's
 * result, where every reader's output meets, rather than in each of the many readers.
 */

// deno-lint-ignore no-control-regex -- matching control characters is this module's job
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;
// deno-lint-ignore no-control-regex -- as above
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]+/g;

/** Removes control characters from every string in `value`, in place; returns `value`. */
export function withoutControlChars<T>(value: T): T {
  clean(value);
  return value;
}

function clean(value: unknown): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "string") {
        if (CONTROL.test(v)) value[i] = v.replace(CONTROLS, "");
      } else if (v && typeof v === "object") clean(v);
    }
  } else if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    for (const k in o) {
      const v = o[k];
      if (typeof v === "string") {
        if (CONTROL.test(v)) o[k] = v.replace(CONTROLS, "");
      } else if (v && typeof v === "object") clean(v);
    }
  }
}
