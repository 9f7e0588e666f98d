/**
 * Whether a URL may be fetched for `/v1/scrape`: http(s) on a marketplace host (www.amazon.de,
 * amazon.co.jp, smile.amazon.com), default port, no credentials. Checked at validation, so that
 * any other URL is a 422 and never charged, and again on every redirect.
 */
import { marketplaceForHost } from "../schemas/marketplaces.ts";

export function isMarketplaceUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password &&
      !url.port && marketplaceForHost(url.hostname) !== undefined;
  } catch {
    return false;
  }
}
