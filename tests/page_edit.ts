/**
 * A saved or hand-built page changed in one named place: the tests that show a case no page shows
 * as it is say what they changed, and fail if the page no longer holds it.
 */
import assert from "node:assert/strict";

/**
 * `page` with `from` written as `to`: a string the page holds exactly once (`first`: its first
 * copy, of several), or the first match of a RegExp (its `$1` groups filled in).
 */
export function changedPage(
  page: string,
  from: string | RegExp,
  to: string,
  which: "only" | "first" = "only",
): string {
  if (typeof from === "string") {
    const copies = page.split(from).length - 1;
    if (which === "only") assert.equal(copies, 1, `the page holds ${from} once`);
    else assert.ok(copies > 0, `not on the page: ${from}`);
    return page.replace(from, () => to);
  }
  const out = page.replace(from, to);
  assert.notEqual(out, page, `not on the page: ${from}`);
  return out;
}
