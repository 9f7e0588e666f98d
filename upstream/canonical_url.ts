/**
 * The URL form replay archives are matched by (INTERFACE.md, "Replay archives"): host
 * lower-cased and without a final dot, query parameters sorted, tracking parameters dropped. Two
 * visits to the same page that differ only in click-tracking then find the same recording.
 */
import { plainHost } from "../schemas/marketplaces.ts";

const TRACKING = new Set([
  "ref",
  "ref_",
  "qid",
  "sr",
  "crid",
  "sprefix",
  "th",
  "psc",
  "dib",
  "dib_tag",
  "_encoding",
  "content-id",
]);
const TRACKING_PREFIXES = ["pd_rd_", "pf_rd_"];

function isTracking(name: string): boolean {
  return TRACKING.has(name) || TRACKING_PREFIXES.some((p) => name.startsWith(p));
}

export function canonicalUrl(raw: string): string {
  const url = new URL(raw);
  // Without the final dot, as marketplace_url.ts asks for the host: a page an earlier version
  // recorded under `www.amazon.com.` is found again (probe HF).
  url.hostname = plainHost(url.hostname);
  url.hash = "";
  const kept = [...url.searchParams].filter(([k]) => !isTracking(k));
  // Sorted by name, then value, so repeated parameters compare equal in any order.
  kept.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  url.search = new URLSearchParams(kept).toString();
  return url.href;
}
