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

function tooLarge(c: Context): Response {
  if (c.req.path.startsWith("/dashboard")) {
    return new Response(TOO_LARGE_PAGE, {
      status: 413,
      headers: { "content-type": "text/html; charset=utf-8", connection: "close" },
    });
  }
  const res = errorResponse(
    new ApiError(
      413,
      "payload_too_large",
      `The request body is larger than ${JSON_BODY_LIMIT / 1024} KiB.`,
    ),
  );
  // The rest of the body is not read; the connection cannot be reused for another request.
  res.headers.set("connection", "close");
  return res;
}

export function bodyLimits(): MiddlewareHandler {
  const forms = bodyLimit({ maxSize: FORM_BODY_LIMIT, onError: tooLarge });
  const json = bodyLimit({ maxSize: JSON_BODY_LIMIT, onError: tooLarge });
  return (c, next) => (c.req.path.startsWith("/dashboard") ? forms(c, next) : json(c, next));
}
