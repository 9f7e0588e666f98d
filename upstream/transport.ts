/**
 * How the data source reaches a marketplace page. Implementations: the browser-like fetcher
 * (`live`, and `origin:` which sends the same requests to a local fake marketplace), the replay
 * of a WARC archive (`archive:`), and the recorder that wraps either fetcher (`UPSTREAM_RECORD`).
 *
 * A transport returns whatever page the marketplace answered with, blocked or not; deciding what
 * the page means is upstream/fetch_page.ts's job. It throws ApiError only for what has no page:
 * a timeout (504) or a connection that failed (502).
 */
import type { PageOutcome } from "./page_read.ts";

export interface UpstreamRequest {
  /** The marketplace URL (https://www.amazon.de/dp/…), as the README lists it. */
  url: string;
  /** Marketplace code of the URL's host. */
  marketplace: string;
  /** Delivery postcode the page must be rendered for. */
  zip?: string;
  signal?: AbortSignal;
  /**
   * Who asks (the account id): a marketplace's slots are shared out among owners in turn, and
   * each owner may have only so many requests waiting (browser_transport.ts). Unset: owner "".
   */
  owner?: string;
  /**
   * Reads an answer (decode, detect, parse: page_read.ts) once. A transport that retries on
   * block pages calls it on each answer it looks at, instead of decoding the body itself, and
   * returns the outcome with the response; the body may be gone (transferred to a page worker)
   * once it was read.
   */
  read?: (res: UpstreamResponse, signal?: AbortSignal) => Promise<PageOutcome>;
  /** What `read` does (the parser), so that shared fetches only share the same reading. */
  readKey?: string;
  /**
   * The URL is a client's (`/v1/scrape`): it runs on a copy of the session every account shares,
   * whose cookies and fate stay its own (browser_transport.ts; probes FJ, FL).
   */
  clientUrl?: boolean;
}

export interface UpstreamResponse {
  /** The URL that answered, after redirects (always a marketplace URL). */
  url: string;
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** True when the request carried an operator-supplied signed-in cookie. */
  authenticated: boolean;
  /** The request's `read` of this answer, when the transport did it. */
  outcome?: PageOutcome;
}

export interface Transport {
  fetch(req: UpstreamRequest): Promise<UpstreamResponse>;
  close?(): Promise<void>;
}
