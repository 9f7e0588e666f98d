/**
 * The request headers a desktop Chrome sends on a top-level navigation, in the marketplace's own
 * language: Amazon's bot defences weigh a request without them (or with a library's defaults)
 * heavily. One browser version for all sessions, as one installation would have.
 */
import { marketplace } from "../schemas/marketplaces.ts";

const CHROME = "131";
const USER_AGENT =
  `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROME}.0.0.0 Safari/537.36`;

export function navigationHeaders(code: string): Record<string, string> {
  const lang = marketplace(code).language;
  const base = lang.split("-")[0];
  return {
    "user-agent": USER_AGENT,
    "accept":
      "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
    "accept-language": base === "en" ? `${lang},en;q=0.9` : `${lang},${base};q=0.9,en;q=0.8`,
    "sec-ch-ua": `"Google Chrome";v="${CHROME}", "Chromium";v="${CHROME}", "Not_A Brand";v="24"`,
    "sec-ch-ua-mobile": "?0",
    "sec-ch-ua-platform": '"Windows"',
    "sec-fetch-dest": "document",
    "sec-fetch-mode": "navigate",
    "sec-fetch-site": "same-origin",
    "sec-fetch-user": "?1",
    "upgrade-insecure-requests": "1",
  };
}

/** Headers of the in-page XHR calls (location pop-over, offers fragment). */
export function xhrHeaders(code: string): Record<string, string> {
  const h = navigationHeaders(code);
  delete h["sec-fetch-user"];
  delete h["upgrade-insecure-requests"];
  return {
    ...h,
    "accept": "text/html,*/*",
    "sec-fetch-dest": "empty",
    "sec-fetch-mode": "cors",
    "x-requested-with": "XMLHttpRequest",
  };
}
