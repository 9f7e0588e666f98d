/**
 * The one interface data routes call: build the upstream URL, fetch, parse. The upstream issue
 * fills it in; until then `unavailableSource` answers every call with an uncharged 502.
 */
import type { Endpoint } from "../schemas/endpoints.ts";
import { ApiError } from "../core/api_error.ts";

export interface DataRequest {
  endpoint: Endpoint;
  /** Validated query parameters, defaults applied. */
  params: Record<string, unknown>;
  /** Charges one more credit for a further upstream page (search `limit`); false when none is left. */
  chargePage(): Promise<boolean>;
  /** Gives back `n` credits of pages charged through `chargePage()` whose fetch failed. */
  refundPages?(n: number): Promise<void>;
  signal?: AbortSignal;
  /**
   * Called by a source as it starts work that takes long (fetching upstream pages): from then on
   * the route watches for the client hanging up. Not before: Deno makes a request's signal on
   * first use, about a microsecond a call, which answers from the cache need not pay.
   */
  watchHangUp?(): void;
  /** The account the call is for: upstream capacity is shared out per owner. */
  owner?: string;
}

export interface DataSource {
  /** The endpoint's response body; throws ApiError (404, 502, 503, 504) when it cannot. */
  fetch(req: DataRequest): Promise<unknown>;
}

export const unavailableSource: DataSource = {
  fetch() {
    return Promise.reject(
      new ApiError(502, "upstream_error", "No upstream is configured for this endpoint yet."),
    );
  },
};
