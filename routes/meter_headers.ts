/**
 * Headers on every authenticated response (INTERFACE.md): credits left, reset time and this
 * call's cost, and the IETF RateLimit-Policy / RateLimit fields for the one-second window.
 */
import type { Snapshot } from "../metering/meter.ts";

export function meterHeaders(s: Snapshot | null, cost: number, now: number): Record<string, string> {
  if (!s) return {};
  const resetMs = 1000 - (now % 1000);
  return {
    "X-Credits-Reset": new Date(s.periodEnd).toISOString(),
    "X-Credits-Remaining": String(s.remaining),
    "X-Credits-Cost": String(cost),
    "RateLimit-Policy": `"per-key";q=${s.rateLimit};w=1`,
    "RateLimit": `"per-key";r=${s.windowRemaining};t=${Math.max(1, Math.ceil(resetMs / 1000))}`,
  };
}
