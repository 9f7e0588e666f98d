/**
 * One upstream page as text, or the uncharged error INTERFACE.md names for it: the marketplace's
 * 404 (or its "dogs of Amazon" page) → 404 `not_found`; a robot check, captcha, sign-in wall or
 * 503 that persisted through the transport's retries → 503 `upstream_blocked`; anything else
 * that is not a page → 502 `upstream_error`. `parsed` runs a parser with the same mapping for
 * the ParseError reasons.
 */
import { ApiError } from "../core/api_error.ts";
import type { Detection } from "../parsers/detect.ts";
import { ParseError } from "../parsers/parse_error.ts";
import type { Transport, UpstreamRequest, UpstreamResponse } from "./transport.ts";
import { metrics } from "../core/metrics.ts";
import { marketplaceForHost } from "../schemas/marketplaces.ts";
import type { JobParser, PageOutcome, Parsed } from "./page_read.ts";
import type { PageReader } from "./page_pool.ts";

export interface FetchedPage {
  url: string;
  detection: Detection;
  authenticated: boolean;
  /** The parser's answer, read in the same pass as the detection. */
  parsed?: Parsed;
}

export interface PageRequest extends UpstreamRequest {
  /** The parser the endpoint needs (`auto`: the detected type's). */
  parser: JobParser;
  reviewId?: string;
}

/**
 * Fetches a page and reads it in one pass (decode, detect, parse), on the page workers when
 * there are some. The transport gets the reading as `read`, so a block page it retries on is
 * not decoded twice, and the body is decoded once in all.
 */
export async function fetchPage(
  transport: Transport,
  reader: PageReader,
  req: PageRequest,
): Promise<FetchedPage> {
  const read = (res: UpstreamResponse, signal?: AbortSignal): Promise<PageOutcome> =>
    reader.read(
      {
        parser: req.parser,
        url: res.url,
        marketplace: req.marketplace,
        status: res.status,
        contentType: res.headers.get("content-type"),
        wantLocation: !!req.zip,
        reviewId: req.reviewId,
      },
      res.body,
      signal,
      req.owner,
    );
  const res = await transport.fetch({
    ...req,
    read,
    readKey: `${req.parser}|${req.reviewId ?? ""}`,
  });
  // A 503 or 429 is a block whatever its body says, and is not read: callers that shared the
  // fetch share its one body, which a reading hands to a page worker.
  if (!res.outcome && (res.status === 503 || res.status === 429)) {
    throw blocked(`The marketplace refused the request (HTTP ${res.status}) after retries.`);
  }
  const { detection, parsed } = res.outcome ?? await read(res);
  if (detection.kind === "blocked" || res.status === 503 || res.status === 429) {
    const why = detection.kind === "blocked"
      ? detection.reason.replace("_", " ")
      : `HTTP ${res.status}`;
    // A sign-in wall is answered at once, without retries (browser_transport.ts).
    const retried = detection.kind === "blocked" && detection.reason === "signin_wall"
      ? ""
      : " after retries";
    throw blocked(`The marketplace refused the request (${why})${retried}.`);
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
  return { url: res.url, detection, authenticated: res.authenticated, parsed };
}

/**
 * The parser's answer for a fetched page (typed by the caller, who named the parser); its
 * ParseError becomes the matching uncharged ApiError. Counts the filled fields (parser health).
 */
export function parsed<T>(page: FetchedPage): T {
  const p = page.parsed;
  if (!p) throw asApiError(new ParseError("unrecognised", "the page was not read"), page.url);
  if (!p.ok) throw asApiError(new ParseError(p.reason, p.message), page.url);
  let host = "";
  try {
    host = new URL(page.url).hostname;
  } catch { /* a page without a URL counts under no marketplace */ }
  metrics.recordParse(p.type ?? "unknown", marketplaceForHost(host)?.code ?? "unknown", p.fields);
  return p.value as T;
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
