/**
 * An endpoint's answer checked before it is paid for, and before anything keeps it: against its
 * response schema, and against the size no real page's answer reaches. An answer either check
 * refuses is an uncharged 502, whether a client's call (routes/data.ts) or a watch's refresh
 * (watches/scheduler.ts) asked for it, and the price history does not record it
 * (price_history.ts). A refresh once kept its charge for an answer the same call would have been
 * refunded for (probe CL), and later for one the size check refused, which only the route made,
 * sending a signed event with the refused page's price (probe EJ).
 */
import { ApiError } from "../core/api_error.ts";
import type { Endpoint } from "../schemas/endpoints.ts";
import { MAX_ANSWER_CHARS } from "./page_read.ts";
import { utf8Bytes } from "../core/utf8_bytes.ts";

/** The answer as the schema reads it, and its JSON. */
export function checkedAnswer(
  ep: Endpoint,
  body: unknown,
  logError: (message: string, detail?: unknown) => void,
): { value: unknown; json: string } {
  const checked = ep.response.safeParse(body);
  if (!checked.success) {
    logError(`response of ${ep.path} failed its schema`, checked.error.issues.slice(0, 3));
    throw new ApiError(502, "upstream_error", "The upstream page did not yield a complete answer.");
  }
  const json = JSON.stringify(checked.data);
  if (moreBytesThan(json, MAX_ANSWER_CHARS)) {
    logError(
      `answer of ${ep.path} too large: over ${MAX_ANSWER_CHARS} bytes of JSON (${json.length} characters)`,
    );
    throw new ApiError(
      502,
      "upstream_error",
      "The upstream page yielded an answer far larger than any real page does.",
    );
  }
  return { value: checked.data, json };
}

/**
 * Whether `s` takes more than `max` bytes in UTF-8, counted only as far as needed: the bound is
 * what the answer sends, and 8 M characters of a three-byte script, counted as characters, were a
 * 16.6 MB answer, charged (probe FZ).
 */
function moreBytesThan(s: string, max: number): boolean {
  if (s.length > max) return true;
  if (s.length * 3 <= max) return false;
  return utf8Bytes(s, max) > max;
}
