/**
 * What /v1 answers to anything but GET (issue 13.12): 405 `method_not_allowed` with `Allow: GET`
 * in the spec's error shape, before any key is read, so nothing is ever charged; and, only for
 * the origins in CORS_ORIGINS, CORS headers (Hono's cors middleware) with OPTIONS answered as
 * a preflight. Without CORS_ORIGINS no CORS header is sent and OPTIONS is a 405 like the rest.
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { ApiError, errorResponse } from "../core/api_error.ts";

/** CORS_ORIGINS: null (unset), "*" or a list of exact origins. */
export type CorsOrigins = null | "*" | string[];

export function parseCorsOrigins(value: string | undefined): CorsOrigins {
  if (value === undefined || value.trim() === "") return null;
  if (value.trim() === "*") return "*";
  return value.split(",").map((o) => o.trim()).filter(Boolean).map((o) => {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new RangeError(
        `Cannot start as 'CORS_ORIGINS' must list origins like https://app.example: current value has ${o}`,
      );
    }
    if (u.origin !== o.replace(/\/$/, "")) {
      throw new RangeError(
        `Cannot start as 'CORS_ORIGINS' must list origins like https://app.example: current value has ${o}`,
      );
    }
    return u.origin;
  });
}

function notAllowed(): Response {
  const res = errorResponse(
    new ApiError(405, "method_not_allowed", "Every /v1 endpoint is GET only."),
  );
  res.headers.set("allow", "GET");
  return res;
}

export function v1Methods(origins: CorsOrigins): MiddlewareHandler {
  const allowed = (origin: string) =>
    origins === "*" || (origins !== null && origins.includes(origin));
  const corsHeaders = origins === null ? null : cors({
    origin: (origin) => (allowed(origin) ? (origins === "*" ? "*" : origin) : null),
    allowMethods: ["GET"],
    allowHeaders: ["x-api-key", "authorization"],
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
  return async (c, next) => {
    const method = c.req.method;
    if (method === "OPTIONS") {
      const origin = c.req.header("origin");
      const preflight = corsHeaders && origin && allowed(origin) &&
        c.req.header("access-control-request-method");
      return preflight ? await corsHeaders(c, next) as Response : notAllowed();
    }
    if (method !== "GET") return notAllowed();
    if (corsHeaders) return await corsHeaders(c, next);
    await next();
  };
}
