/**
 * Headers on every authenticated response (INTERFACE.md): credits left, reset time and this
 * call's cost, and the IETF RateLimit-Policy / RateLimit fields for the one-second window. And
 * `Cache-Control: private, no-store`: the answer is one customer's paid data, which a shared
 * cache in front of Shelf (Varnish keeps responses without the header that came without an
 * Authorization header, as x-api-key calls do) would otherwise hand to anyone, uncharged.
 */
import type { Snapshot } from "../metering/meter.ts";

// The reset time of a period is the same on every call in it; format it once.
let lastEnd = NaN;
let lastIso = "";
function iso(ms: number): string {
  if (ms !== lastEnd) {
    lastEnd = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

export function meterHeaders(
  s: Snapshot | null,
  cost: number,
  now: number,
): Record<string, string> {
  if (!s) return {};
  const resetSec = Math.max(1, Math.ceil((1000 - (now % 1000)) / 1000));
  return {
    "content-type": "application/json",
    "cache-control": "private, no-store",
    "x-credits-reset": iso(s.periodEnd),
    "x-credits-remaining": String(s.remaining),
    "x-credits-cost": String(cost),
    "ratelimit-policy": `"per-key";q=${s.rateLimit};w=1`,
    "ratelimit": `"per-key";r=${s.windowRemaining};t=${resetSec}`,
  };
}
