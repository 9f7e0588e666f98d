/**
 * What /v1 answers to a method its path does not take (issue 13.12): 405 `method_not_allowed`
 * with `Allow` in the spec's error shape, before any key is read, so nothing is ever charged; and,
 * only for the origins in CORS_ORIGINS, CORS headers (Hono's cors middleware) with OPTIONS
 * answered as a preflight. Without CORS_ORIGINS no CORS header is sent and OPTIONS is a 405 like
 * the rest. Every data endpoint is GET only; the watches of "Beyond the spec" are the exception
 * (POST and GET /v1/watches, DELETE /v1/watches/{id}).
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { cors } from "hono/cors";
import { ApiError, errorResponse } from "../core/api_error.ts";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";
import { redactUrl } from "../core/redact_url.ts";

/** CORS_ORIGINS: null (unset), "*" or a list of exact origins. */
export type CorsOrigins = null | "*" | string[];

export function parseCorsOrigins(value: string | undefined): CorsOrigins {
  if (value === undefined || value.trim() === "") return null;
  if (value.trim() === "*") return "*";
  return value.split(",").map((o) => o.trim()).filter(Boolean).map((o) => {
    const refuse = () =>
      new RangeError(
        `Cannot start as 'CORS_ORIGINS' must list origins like https://app.example: current value has ${
          redactUrl(o)
        }`,
      );
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw refuse();
    }
    if (u.origin !== o.replace(/\/$/, "")) throw refuse();
    return u.origin;
  });
}

const GET_PATHS = new Set(["/v1", ...ALL_ENDPOINTS.map((e) => e.path)]);

/**
 * The methods a /v1 path takes; null for a path that does not exist, which is a 404 whatever the
 * method (INTERFACE.md checks the path first).
 */
export function allowedMethods(path: string): string[] | null {
  if (path === "/v1/watches") return ["GET", "POST"];
  if (/^\/v1\/watches\/[^/]+$/.test(path)) return ["DELETE"];
  return GET_PATHS.has(path) ? ["GET"] : null;
}

function notAllowed(allow: string[]): Response {
  const res = errorResponse(
    new ApiError(
      405,
      "method_not_allowed",
      allow.length === 1 && allow[0] === "GET"
        ? "Every /v1 endpoint is GET only."
        : `This endpoint takes ${allow.join(" and ")} only.`,
    ),
  );
  res.headers.set("allow", allow.join(", "));
  return res;
}

/** Every method some /v1 path takes. */
const CORS_METHODS = ["GET", "POST", "DELETE"];

export function v1Methods(origins: CorsOrigins): MiddlewareHandler {
  const allowed = (origin: string) =>
    origins === "*" || (origins !== null && origins.includes(origin));
  const corsHeaders = origins === null ? null : cors({
    origin: (origin) => (allowed(origin) ? (origins === "*" ? "*" : origin) : null),
    allowMethods: CORS_METHODS,
    allowHeaders: ["x-api-key", "authorization", "content-type"],
    exposeHeaders: [
      "x-credits-reset",
      "x-credits-remaining",
      "x-credits-cost",
      "ratelimit-policy",
      "ratelimit",
      "retry-after",
      "x-request-id",
      "age",
    ],
    maxAge: 600,
  });
  // Not async for a plain GET (every metered call), and answers by setting c.res, as Hono's
  // compose would take a returned answer: it runs in one layer with others (one_layer.ts).
  return (c, next) => {
    if (corsHeaders === null && c.req.method === "GET" && GET_PATHS.has(c.req.path)) return next();
    return check(c, next).then((res) => {
      if (res instanceof Response && !c.finalized) c.res = res;
    });
  };
  async function check(c: Context, next: Next): Promise<Response | void> {
    const method = c.req.method;
    const allow = allowedMethods(c.req.path);
    // An allowed origin reads the spec's error of a 404 or 405 too, not a browser's "Failed to
    // fetch": its preflight for any method /v1 takes is answered, whatever the path (a request
    // with a key is always preflighted), and the error that follows carries the CORS headers.
    if (method === "OPTIONS") {
      const origin = c.req.header("origin");
      const wanted = c.req.header("access-control-request-method")?.toUpperCase();
      const preflight = corsHeaders && origin && allowed(origin) && wanted &&
        CORS_METHODS.includes(wanted);
      if (preflight) return await corsHeaders(c, next) as Response;
      return allow === null ? await next() : notAllowed(allow);
    }
    if (allow === null) {
      return corsHeaders ? await corsHeaders(c, next) : await next(); // the router's 404
    }
    if (!allow.includes(method)) {
      if (!corsHeaders) return notAllowed(allow);
      await corsHeaders(c, () => {
        c.res = notAllowed(allow);
        return Promise.resolve();
      });
      return c.res;
    }
    if (corsHeaders) return await corsHeaders(c, next);
    await next();
  }
}
