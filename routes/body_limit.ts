/**
 * Limits on request bodies, kept while a route reads one: a body over its byte limit is a 413
 * (with or without Content-Length), one that has not arrived whole within BODY_SECONDS a 408, one
 * cut short a 400; dashboard forms get an HTML page, the rest the spec's error body. A body is
 * read only when a route reads it, after whatever the route checks first (the admin token, the
 * API key), and at most MAX_READING bodies are read at once, the second half of them shared
 * out by client (MAX_READING_PER_CLIENT). Hono's bodyLimit is not used: it reads a body sent
 * without Content-Length whole before any route runs, so POST streams that never ended, on any
 * path and without a token, each held 80-100 KB for as long as the client kept them open (probe
 * BG: 50 HTTP/2 connections of 200 such streams took the process from 173 MB to 1,026 MB, kept
 * after they closed).
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { ApiError, errorResponse } from "../core/api_error.ts";
import { clientAddress } from "./client_address.ts";
import { BODY_SECONDS, FORM_BODY_LIMIT, JSON_BODY_LIMIT } from "../schemas/request_limits.ts";

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
      headers: { ...error.headers, "content-type": "text/html; charset=utf-8" },
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

/** Bodies read at once in this process: a stalled one holds about 100 KB until BODY_SECONDS. */
export const MAX_READING = 512;
/**
 * Bodies read at once for one client (an IPv4 address, an IPv6 /48) once half of MAX_READING are
 * being read: below that a client reads as many as it sends (a burst of watch creations). The last
 * quarter is kept for clients with none being read, one each: 32 addresses sending bodies that
 * never came held all 512, and every sign-in was a 503 (probe BH).
 */
export const MAX_READING_PER_CLIENT = 16;

/** Headers of a route's answer that describe its body or connection, not the call. */
const NOT_KEPT = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "set-cookie",
]);

type Refusal = "too_large" | "timeout" | "cut_short" | "busy" | "busy_client" | "stopping";

/** Why a body was not read; the route that tried to read it sees this as the read's error. */
class BodyRefused extends Error {
  constructor(readonly why: Refusal) {
    super(`request body refused: ${why}`);
  }
}

const SLOW_PAGE = (seconds: number) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too slow</title></head>
<body><h1>The form took too long</h1><p>The form did not arrive within ${seconds} seconds. Go back
and try again.</p></body></html>`;

/**
 * A body that did not arrive in time: 408, but 400 on the dashboard, since a browser sends a form
 * answered 408 again by itself (Chromium: the user waited 30 s for the page instead of 10; probe
 * BS).
 */
const timedOut = (c: Context, seconds: number) =>
  refused(
    c,
    SLOW_PAGE(seconds),
    new ApiError(
      c.req.path.startsWith("/dashboard") ? 400 : 408,
      "request_timeout",
      `The request body did not arrive within ${seconds} seconds.`,
    ),
  );

const BUSY_PAGE =
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Busy</title></head>
<body><h1>Too many forms at once</h1><p>Too many forms are being sent to this service right now.
Wait a moment, go back and try again.</p></body></html>`;

/** A form cut by a stop: the busy page said "too many forms", which it was not (probe FW). */
const STOPPING_PAGE =
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Restarting</title></head>
<body><h1>The service is restarting</h1><p>The form was cut off while the service stopped. Wait a
moment, go back and try again.</p></body></html>`;

const busy = (c: Context, one: boolean) => {
  const error = one
    ? new ApiError(
      429,
      "rate_limited",
      "Too many request bodies are being sent from this address at once; retry in a moment.",
      { "Retry-After": "1" },
    )
    : new ApiError(503, "unavailable", "Too many request bodies are arriving; retry shortly.", {
      "Retry-After": "1",
    });
  return refused(c, BUSY_PAGE, error);
};

/** The limits above, which a test may set lower. */
export interface BodyReading {
  seconds: number;
  max: number;
  perClient: number;
}

/**
 * `stopping` is aborted at the end of a drain (main.ts): bodies still arriving then are cut with
 * a 503, or one body that never came kept a stop waiting until it was forced (probe BL).
 * `draining` is aborted when the drain starts: Deno's `server.shutdown()` drops every body still
 * being read ("Cannot read body as underlying resource unavailable"), and such a body, cut by the
 * stop, was answered 400 "did not arrive whole" as if the client had hung up (probe FU).
 */
export function bodyLimits(
  proxies = 0,
  limits: Partial<BodyReading> = {},
  stopping: AbortSignal = new AbortController().signal,
  draining: AbortSignal = stopping,
): MiddlewareHandler {
  const { seconds, max: maxReading, perClient } = {
    seconds: BODY_SECONDS,
    max: MAX_READING,
    perClient: MAX_READING_PER_CLIENT,
    ...limits,
  };
  let reading = 0;
  const byClient = new Map<string, number>();
  // Not async for a request without a body (every metered call): it runs in one layer with others
  // (one_layer.ts), and answers only by setting c.res.
  return (c, next) => {
    const stream = c.req.raw.body;
    return stream ? limited(c, next, stream) : next();
  };
  async function limited(c: Context, next: Next, stream: ReadableStream<Uint8Array>) {
    const raw = c.req.raw;
    const max = c.req.path.startsWith("/dashboard") ? FORM_BODY_LIMIT : JSON_BODY_LIMIT;
    // A declared length over the limit is refused when a route reads the body, not before: a
    // route's own checks (the key, the admin token, the path) answer first (probe BQ).
    const length = raw.headers.get("content-length");
    const declaredOver = length !== null && !raw.headers.has("transfer-encoding") &&
      parseInt(length, 10) > max;
    let refusal: Refusal | null = null;
    // Taken before the request is copied: copying it made the runtime drop the body's resource.
    // Taking a reader reads nothing.
    const reader = stream.getReader();
    let counted = false;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let client: string | null = null;
    let size = 0;
    const release = () => {
      clearTimeout(timer);
      stopping.removeEventListener("abort", onStop);
      if (client === null) return;
      reading--;
      const n = (byClient.get(client) ?? 1) - 1;
      if (n > 0) byClient.set(client, n);
      else byClient.delete(client);
      client = null;
    };
    const refuse = (why: Refusal) => {
      refusal ??= why;
      release();
      const e = new BodyRefused(why);
      try {
        controller.error(e);
      } catch { /* errored or closed already */ }
      reader.cancel(e).catch(() => {});
      return e;
    };
    const timer = setTimeout(() => refuse("timeout"), seconds * 1000);
    const onStop = () => refuse("stopping");
    stopping.addEventListener("abort", onStop, { once: true });
    const body = new ReadableStream<Uint8Array>({
      start(ctl) {
        controller = ctl;
        if (stopping.aborted) refuse("stopping");
      },
      async pull(ctl) {
        if (refusal) return;
        if (declaredOver) return void refuse("too_large");
        if (!counted) {
          // An IPv6 client counts by its /48: a home delegation holds 65,536 /64s.
          const from = clientAddress(c, proxies);
          const who = from.network ?? from.address ?? "";
          const held = byClient.get(who) ?? 0;
          if (reading >= maxReading) return void refuse("busy");
          if (
            (reading >= maxReading - Math.floor(maxReading / 4) && held > 0) ||
            (reading >= maxReading / 2 && held >= perClient)
          ) return void refuse("busy_client");
          reading++;
          byClient.set(who, held + 1);
          client = who;
          counted = true;
        }
        let part: ReadableStreamReadResult<Uint8Array>;
        try {
          part = await reader.read();
        } catch {
          // A chunked body cut short by the client (it hung up mid-chunk), or by the stop.
          return void refuse(draining.aborted ? "stopping" : "cut_short");
        }
        if (refusal) return;
        if (part.done) {
          release();
          return ctl.close();
        }
        size += part.value.byteLength;
        if (size > max) return void refuse("too_large");
        ctl.enqueue(part.value);
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
      // Pulled only when a route reads: a body no route reads is never read.
    }, { highWaterMark: 0 });
    c.req.raw = new Request(raw, { body, duplex: "half" } as RequestInit);
    try {
      await next();
    } finally {
      release();
    }
    // Set by the stream's callbacks, which the type checker does not follow.
    const why = refusal as Refusal | null;
    if (why) {
      // Whatever the route made of the failed read, the answer is the body's refusal, with the
      // route's own headers (a watch creation's X-Credits-* and RateLimit-*: probe BQ).
      const own = c.res.headers;
      const answer = why === "too_large"
        ? tooLarge(c)
        : why === "timeout"
        ? timedOut(c, seconds)
        : why === "cut_short"
        ? unreadable(c)
        : why === "stopping"
        ? refused(
          c,
          STOPPING_PAGE,
          new ApiError(503, "unavailable", "The service is stopping; retry shortly.", {
            "Retry-After": "1",
          }),
        )
        : busy(c, why === "busy_client");
      for (const [name, value] of own) {
        if (!answer.headers.has(name) && !NOT_KEPT.has(name)) answer.headers.set(name, value);
      }
      c.res = undefined;
      c.res = answer;
    }
  }
}
