/**
 * Per-request middleware (INTERFACE.md "Operations"): the `X-Request-Id` of every response (an
 * incoming one of 1-64 `[A-Za-z0-9._-]` is kept, else a new one is made), one access-log line
 * per request, and the HTTP metrics. Routes add what only they know through the context:
 * `credits` charged and the `account` id. The logged path has any `api_key` value masked; keys,
 * passwords, session tokens and cookies never reach a line.
 */
import type { Context, MiddlewareHandler } from "hono";
import { maskSecrets } from "../core/ops_log.ts";
import { isHostName } from "./request_target.ts";
import { pacedTextResponse } from "../core/paced_body.ts";
import type { Metrics } from "../core/metrics.ts";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const KNOWN = new Set(ALL_ENDPOINTS.map((e) => e.path));

/** Characters of a request's path and query, and of its method, that its log line keeps. */
export const MAX_LOGGED_PATH = 2_048;
/** Longer than any key or admin token written percent-encoded three times. */
const CUT_MARGIN = 512;
const MAX_LOGGED_METHOD = 32;

/** A route label of bounded cardinality for metrics: never an id, an ASIN or a query. */
export function routeLabel(path: string): string {
  if (KNOWN.has(path)) return path;
  if (path === "/v1") return "/v1/";
  if (path === "/v1/watches") return path;
  if (path.startsWith("/v1/watches/")) return "/v1/watches/{id}";
  for (const prefix of ["/dashboard", "/admin", "/docs"]) {
    if (path === prefix || path.startsWith(prefix + "/")) return prefix;
  }
  if (["/", "/healthz", "/readyz", "/metrics", "/openapi.json"].includes(path)) return path;
  return "other";
}

/** Responses built with this request's id already among their headers (see textWithRequestId). */
const stamped = new WeakSet<Response>();

/**
 * A response of serialized JSON (its headers name the content type) carrying the request's id
 * from the start: setting it afterwards makes Deno copy the whole header list again, which the
 * metered call's hot path cannot afford.
 */
export function textWithRequestId(
  c: Context,
  text: string,
  headers: Record<string, string>,
): Response {
  const id = c.get("requestId" as never) as string | undefined;
  if (id) headers["x-request-id"] = id;
  const res = pacedTextResponse(text, headers);
  if (id) stamped.add(res);
  return res;
}

/** What a route tells the access log about its call. */
export function noteCall(c: Context, note: { credits?: number; account?: string }): void {
  if (note.credits !== undefined) c.set("credits" as never, note.credits as never);
  if (note.account !== undefined) c.set("account" as never, note.account as never);
}

// C0 and C1 controls, DEL, and the Unicode line and paragraph separators: readers that split
// lines on Unicode line breaks cut a line at NEL or U+2028 (probe BT).
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * Any token the runtime takes is a method: an unknown one is masked like a path (an admin token
 * sent as one), then cut. Masked before the cut, so that no cut secret escapes its pattern.
 */
function loggedMethod(method: string, secrets: string[]): string {
  if (METHODS.has(method)) return method;
  return maskSecrets(method.slice(0, 4 * MAX_LOGGED_METHOD), secrets).slice(0, MAX_LOGGED_METHOD);
}

export function requestLog(
  opts: {
    log: ((line: Record<string, unknown>) => void) | null;
    metrics: Metrics;
    /** Values never logged wherever they appear (the admin token sent in a path). */
    secrets?: string[];
  },
): MiddlewareHandler {
  const secrets = (opts.secrets ?? []).filter((v) => v.length >= 8);
  return async (c, next) => {
    const started = performance.now();
    const given = c.req.header("x-request-id");
    // An id holding a key or the admin token (a client's mistake) would be logged and sent back
    // in clear: it is replaced like a malformed one (probe CM).
    const id = given && REQUEST_ID.test(given) && maskSecrets(given, secrets) === given
      ? given
      : crypto.randomUUID();
    c.set("requestId" as never, id as never);
    try {
      await next();
    } finally {
      let res = c.res;
      if (!stamped.has(res)) {
        try {
          res.headers.set("x-request-id", id);
        } catch { // a response with immutable headers: copy it once
          // Hono's setter copies what it is given, so the header goes on what it then holds: set
          // on the response handed to it, it never left (probe ID).
          c.res = new Response(res.body, res);
          res = c.res;
          res.headers.set("x-request-id", id);
        }
      }
      const seconds = (performance.now() - started) / 1000;
      const route = routeLabel(c.req.path);
      opts.metrics.httpRequests.inc({ route, status: String(res.status) });
      opts.metrics.httpDuration.observe({ route }, seconds);
      if (opts.log) {
        const url = c.req.url;
        // The URL is the Host header and the path: a Host that is no host name (a 400, see
        // requestTarget) would have its text logged as the query (probe BW: a Host holding "?"),
        // so such a request's query is not logged.
        const host = c.req.header("host");
        const q = host !== undefined && !isHostName(host) ? -1 : url.indexOf("?");
        // Cut to twice what is shown before masking (this log wraps the 414: a URL here may be
        // 64 KB, and masking one of `/%` held the thread 75-108 ms; probe BU).
        // Control characters (decoded from `%01`) go back to their percent form: JSON writes each
        // as six bytes, and 2,100 of them in a 6 KB request made an 11.5 KB line (probe AN).
        const whole = c.req.path + (q >= 0 ? url.slice(q) : "");
        const cut = whole.length > 2 * MAX_LOGGED_PATH;
        const masked = maskSecrets(cut ? whole.slice(0, 2 * MAX_LOGGED_PATH) : whole, secrets)
          .replace(CONTROL, encodeURIComponent);
        // Nothing within CUT_MARGIN of the cut is shown: a key or token the cut split is masked
        // by no pattern, and masking the text before it could pull it into view.
        const room = cut ? Math.min(MAX_LOGGED_PATH, masked.length - CUT_MARGIN) : MAX_LOGGED_PATH;
        const shown = masked.length > room ? masked.slice(0, Math.max(0, room)) : masked;
        opts.log({
          ts: new Date().toISOString(),
          request_id: id,
          method: loggedMethod(c.req.method, secrets),
          // Any client, without a key, chooses the path: 64 KB of `%01` made a 130 KB line.
          path: shown,
          ...(shown.length < masked.length ? { path_truncated: true } : {}),
          status: res.status,
          ms: Math.round(seconds * 10_000) / 10,
          credits: (c.get("credits" as never) as number | undefined) ?? 0,
          account: (c.get("account" as never) as string | undefined) ?? null,
        });
      }
    }
  };
}
