/**
 * One upstream page as text, or the uncharged error INTERFACE.md names for it: the marketplace's
 * 404 (or its "dogs of Amazon" page) → 404 `not_found`; a robot check, captcha, sign-in wall or
 * 503 that persisted through the transport's retries → 503 `upstream_blocked`; anything else
 * that is not a page → 502 `upstream_error`. `parsed` runs a parser with the same mapping for
 * the ParseError reasons.
 */
import { ApiError } from "../core/api_error.ts";
import { decodeHtml } from "../parsers/decode.ts";
import { type Detection, detectPage } from "../parsers/detect.ts";
import { ParseError } from "../parsers/parse_error.ts";
import type { Transport, UpstreamRequest } from "./transport.ts";
import { metrics } from "../core/metrics.ts";
import { fieldCounts } from "../core/parser_health.ts";
import { marketplaceForHost } from "../schemas/marketplaces.ts";

export interface FetchedPage {
  url: string;
  html: string;
  detection: Detection;
  authenticated: boolean;
}

export async function fetchPage(transport: Transport, req: UpstreamRequest): Promise<FetchedPage> {
  const res = await transport.fetch(req);
  const html = decodeHtml(res.body, res.headers.get("content-type"));
  const detection = detectPage(html);
  if (detection.kind === "blocked" || res.status === 503 || res.status === 429) {
    const why = detection.kind === "blocked"
      ? detection.reason.replace("_", " ")
      : `HTTP ${res.status}`;
    throw blocked(`The marketplace refused the request (${why}) after retries.`);
  }
  if (res.status === 404 || res.status === 410 || detection.kind === "not_found") {
    throw notFound(`The marketplace has no page at ${req.url}.`);
  }
  if (res.status < 200 || res.status >= 300) {
    throw new ApiError(
      502,
      "upstream_error",
      `The marketplace answered HTTP ${res.status} for ${req.url}.`,
    );
  }
  return { url: res.url, html, detection, authenticated: res.authenticated };
}

/** Runs a parser on a fetched page; its ParseError becomes the matching uncharged ApiError. */
export function parsed<T>(page: FetchedPage, parse: (html: string) => T): T {
  let result: T;
  try {
    result = parse(page.html);
  } catch (e) {
    throw asApiError(e, page.url);
  }
  recordFields(page, result);
  return result;
}

/** Parser health: which fields this parse filled, per page type and marketplace. */
function recordFields(page: FetchedPage, result: unknown): void {
  let host = "";
  try {
    host = new URL(page.url).hostname;
  } catch { /* a page without a URL counts under no marketplace */ }
  const type = page.detection.kind === "page" ? page.detection.type : "unknown";
  metrics.recordParse(type, marketplaceForHost(host)?.code ?? "unknown", fieldCounts(result));
}

export function asApiError(e: unknown, url: string): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof ParseError) {
    if (e.reason === "blocked") return blocked(`The marketplace served a block page for ${url}.`);
    if (e.reason === "not_found") return notFound(e.message);
    return new ApiError(
      502,
      "upstream_error",
      `The upstream page could not be read (${e.reason}): ${e.message}`,
    );
  }
  return new ApiError(
    502,
    "upstream_error",
    `The upstream page could not be read: ${(e as Error)?.message ?? e}`,
  );
}

export function notFound(message: string): ApiError {
  return new ApiError(404, "not_found", message);
}

function blocked(message: string): ApiError {
  return new ApiError(503, "upstream_blocked", message);
}
