/**
 * Byte limits on request bodies (Hono's bodyLimit), applied before any route reads one: a body
 * over the limit is refused with 413 while it arrives, with or without Content-Length, so a
 * large or endless body cannot exhaust memory. Dashboard forms get an HTML page, the rest the
 * spec's error body.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError, errorResponse } from "../core/api_error.ts";

/** Dashboard forms: an e-mail, a password, a key name, a CSRF token. */
export const FORM_BODY_LIMIT = 16 * 1024;
/** Admin JSON and any other body. */
export const JSON_BODY_LIMIT = 64 * 1024;

const TOO_LARGE_PAGE =
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too large</title></head>
<body><h1>Form too large</h1><p>The form sent more than ${
    FORM_BODY_LIMIT / 1024
  } KiB. Go back and try again.</p></body></html>`;

const UNREADABLE_PAGE =
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Form not received</title>
</head><body><h1>Form not received</h1><p>The form did not arrive whole. Go back and try again.</p>
</body></html>`;

/**
 * A body refused before any route read it: an HTML page on the dashboard, the spec's error
 * elsewhere. The rest of the body is not read, so the connection cannot serve another request.
 */
function refused(c: Context, page: string, error: ApiError): Response {
  const res = c.req.path.startsWith("/dashboard")
    ? new Response(page, {
      status: error.status,
      headers: { "content-type": "text/html; charset=utf-8" },
    })
    : errorResponse(error);
  res.headers.set("connection", "close");
  return res;
}

const tooLarge = (c: Context) =>
  refused(
    c,
    TOO_LARGE_PAGE,
    new ApiError(
      413,
      "payload_too_large",
      `The request body is larger than ${JSON_BODY_LIMIT / 1024} KiB.`,
    ),
  );

/** A body that ended before it was whole (a client that hung up mid-chunk): a 400. */
const unreadable = (c: Context) =>
  refused(
    c,
    UNREADABLE_PAGE,
    new ApiError(400, "bad_request", "The request body did not arrive whole."),
  );

export function bodyLimits(): MiddlewareHandler {
  const forms = bodyLimit({ maxSize: FORM_BODY_LIMIT, onError: tooLarge });
  const json = bodyLimit({ maxSize: JSON_BODY_LIMIT, onError: tooLarge });
  return async (c, next) => {
    // A chunked body is read here, before any route: one cut short threw from this read, past
    // every route's own catch, and was an unhandled error (503) on every route with a body,
    // without a key (probe AI). What throws after the routes ran is theirs.
    let routed = false;
    const route = () => {
      routed = true;
      return next();
    };
    try {
      return await (c.req.path.startsWith("/dashboard") ? forms(c, route) : json(c, route));
    } catch (e) {
      if (routed) throw e;
      return unreadable(c);
    }
  };
}
