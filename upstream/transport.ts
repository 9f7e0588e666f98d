/**
 * How the data source reaches a marketplace page. Implementations: the browser-like fetcher
 * (`live`, and `origin:` which sends the same requests to a local fake marketplace), the replay
 * of a WARC archive (`archive:`), and the recorder that wraps either fetcher (`UPSTREAM_RECORD`).
 *
 * A transport returns whatever page the marketplace answered with, blocked or not; deciding what
 * the page means is upstream/fetch_page.ts's job. It throws ApiError only for what has no page:
 * a timeout (504) or a connection that failed (502).
 */
export interface UpstreamRequest {
  /** The marketplace URL (https://www.amazon.de/dp/…), as the README lists it. */
  url: string;
  /** Marketplace code of the URL's host. */
  marketplace: string;
  /** Delivery postcode the page must be rendered for. */
  zip?: string;
  signal?: AbortSignal;
}

export interface UpstreamResponse {
  /** The URL that answered, after redirects (always a marketplace URL). */
  url: string;
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** True when the request carried an operator-supplied signed-in cookie. */
  authenticated: boolean;
}

export interface Transport {
  fetch(req: UpstreamRequest): Promise<UpstreamResponse>;
  close?(): Promise<void>;
}
