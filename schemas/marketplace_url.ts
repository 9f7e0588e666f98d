/**
 * The one way any input becomes an upstream URL (issue 13.1): parse it (relative to `base` when
 * given), then judge the URL that parsing produced, never a string rebuilt from its parts. A
 * path like `//127.0.0.1/x` is thus still a path of the marketplace host, and `user@host`,
 * `\\@host`, IP literals in any notation (the URL parser turns `2130706433` and `0177.0.0.1`
 * into `127.0.0.1`) and other ports are refused, because the parsed host is not a marketplace
 * host. Scrape URLs, redirects, the URL builders and every request the transport sends go
 * through it.
 */
import { type Marketplace, marketplaceForHost, plainHost } from "./marketplaces.ts";

export class NotMarketplaceUrl extends Error {
  constructor(readonly input: string, reason: string) {
    super(`Not a marketplace URL (${reason}).`);
    this.name = "NotMarketplaceUrl";
  }
}

export interface UpstreamUrl {
  /** The URL as Shelf fetches it: https, the marketplace host, the input's path and query. */
  url: URL;
  marketplace: Marketplace;
}

export function upstreamUrl(input: string | URL, base?: string): UpstreamUrl {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    throw new NotMarketplaceUrl(String(input), "not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new NotMarketplaceUrl(url.href, "not http(s)");
  }
  if (url.username || url.password) throw new NotMarketplaceUrl(url.href, "credentials in the URL");
  if (url.port) throw new NotMarketplaceUrl(url.href, "a port other than the default");
  const marketplace = exactMarketplace(url.hostname);
  if (!marketplace) {
    throw new NotMarketplaceUrl(url.href, `host ${url.hostname} is not a marketplace host`);
  }
  // Setting the scheme keeps host, path and query as parsed; nothing is re-read from the path.
  url.protocol = "https:";
  // One spelling per host: `www.amazon.com.` is the same site, but was asked for under a host
  // name of its own, which the marketplace's servers need not answer (probe GY).
  url.hostname = plainHost(url.hostname);
  url.hash = "";
  return { url, marketplace };
}

/**
 * The marketplace whose own host (or bare domain) `hostname` is exactly, else undefined: other
 * names under amazon.com (aws., a client's made-up one that resolves inside a network) are other
 * sites.
 */
export function exactMarketplace(hostname: string): Marketplace | undefined {
  const marketplace = marketplaceForHost(hostname);
  const host = plainHost(hostname);
  return marketplace && (host === marketplace.host || host === marketplace.host.slice(4))
    ? marketplace
    : undefined;
}

/** Whether `raw` passes upstreamUrl(); the scrape parameter's validation (422, never charged). */
export function isMarketplaceUrl(raw: string): boolean {
  try {
    upstreamUrl(raw);
    return true;
  } catch {
    return false;
  }
}
