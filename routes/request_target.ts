/**
 * Requests Shelf answers at all: a Host header that names a host (and port), and a request target
 * of bounded length; anything else gets the spec's error body before any route or log sees it.
 *
 * Deno builds a request's URL from its Host header, so a Host holding `/` or `?` moved the path
 * and query every route and rule saw (`Host: x/admin/accounts?` before `GET /v1/…` reached
 * `/admin/accounts`, past a proxy that lets only `/v1` through), and one with `<` made the URL
 * unparseable (every dashboard page a 503 quoting the Host in full on stderr). No endpoint needs a
 * long target either: a 60 KB query cost 1.6 ms of the serving thread to log, so 450 requests a
 * second without a key took a paid call's p50 from 3 to 160 ms.
 */
import type { MiddlewareHandler } from "hono";
import { ApiError, errorResponse } from "../core/api_error.ts";

/** Longest request URL answered (origin, path and query), in characters. */
export const MAX_URL = 16 * 1024;
// A DNS name or IPv4 address (underscores too: container names), or an IPv6 literal; a port.
const HOST = /^(?:[A-Za-z0-9_.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Whether a Host header names a host (and port): nothing Deno would read as path or query. */
export function isHostName(host: string): boolean {
  return HOST.test(host);
}

export function requestTarget(): MiddlewareHandler {
  // Not async, and answers by setting c.res: it runs in one layer with others (one_layer.ts).
  return (c, next) => {
    const host = c.req.header("host");
    if (host !== undefined && !isHostName(host)) {
      c.res = errorResponse(
        new ApiError(
          400,
          "bad_request",
          "The Host header must be a host name, with a port or not.",
        ),
      );
      return Promise.resolve();
    }
    if (c.req.url.length > MAX_URL) {
      c.res = errorResponse(
        new ApiError(414, "uri_too_long", `The request URL is longer than ${MAX_URL} characters.`),
      );
      return Promise.resolve();
    }
    return next();
  };
}

/**
 * The request's path for routing, as Hono's own getPath gives it (decoded with decodeURI, "%25"
 * kept), but never at a cost that grows with bad escapes: on a path that does not decode, Hono
 * decodes each escape alone, each failure an exception, before any middleware runs (probe BW:
 * 16 KB of `/%FF` held the serving thread 17 ms a request, 60 KB 55-65 ms). A path that does not
 * decode, or is over MAX_URL (then a 414), is routed as sent.
 */
export function requestPath(req: Request): string {
  const url = req.url;
  const start = url.indexOf("/", url.indexOf(":") + 4);
  let end = url.length;
  for (const stop of ["?", "#"]) {
    const at = url.indexOf(stop, start);
    if (at >= 0 && at < end) end = at;
  }
  const path = url.slice(start, end);
  if (!path.includes("%") || path.length > MAX_URL) return path;
  try {
    return decodeURI(path.includes("%25") ? path.replace(/%25/g, "%2525") : path);
  } catch {
    return path;
  }
}
