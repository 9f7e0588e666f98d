/**
 * `/v1/scrape?url=`: any page of a marketplace host. The page type is detected from the page
 * itself (parsers/detect.ts), then that type's parser runs; `data` is its output.
 */
import { ApiError } from "../core/api_error.ts";
import { type FetchedPage, parsed } from "./fetch_page.ts";
import { NotMarketplaceUrl, upstreamUrl } from "../schemas/marketplace_url.ts";

export async function scrape(
  raw: string,
  get: (url: string, marketplace: string) => Promise<FetchedPage>,
): Promise<unknown> {
  let target;
  try {
    target = upstreamUrl(raw);
  } catch (e) {
    if (!(e instanceof NotMarketplaceUrl)) throw e;
    throw new ApiError(502, "upstream_error", "Only pages of marketplace hosts can be scraped.");
  }
  const mp = target.marketplace;
  const url = target.url.href;
  const page = await get(url, mp.code);
  if (page.detection.kind !== "page") {
    throw new ApiError(
      502,
      "upstream_error",
      "The page at this URL is not a page type Shelf can read.",
    );
  }
  const type = page.detection.type;
  const data = parsed(page);
  return { url: page.url, type, marketplace: mp.code, data };
}
