/**
 * An endpoint's answer checked against its response schema before it is paid for: an answer the
 * schema refuses is an uncharged 502, whether a client's call (routes/data.ts) or a watch's
 * refresh (watches/scheduler.ts) asked for it. A refresh once kept its charge for an answer the
 * same call would have been refunded for (probe CL).
 */
import { ApiError } from "../core/api_error.ts";
import type { Endpoint } from "../schemas/endpoints.ts";

export function checkedAnswer(
  ep: Endpoint,
  body: unknown,
  logError: (message: string, detail: unknown) => void,
): unknown {
  const checked = ep.response.safeParse(body);
  if (checked.success) return checked.data;
  logError(`response of ${ep.path} failed its schema`, checked.error.issues.slice(0, 3));
  throw new ApiError(502, "upstream_error", "The upstream page did not yield a complete answer.");
}
