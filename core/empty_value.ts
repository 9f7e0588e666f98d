/**
 * The values a parser gives a field the page does not show: null, "", 0, [], or an object of
 * such values (a price with no amount). `missing` in answers (upstream/envelopes.ts) and parser
 * health (core/parser_health.ts) both count by this one rule: health counting 0 as filled could
 * not see ratings and review counts no longer read (probe BM).
 */
export function isEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined || v === "" || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.values(v as object).every(isEmptyValue);
  return false;
}
