/**
 * Who a request came from, for limits kept per client: the connection's peer, or, behind
 * TRUST_PROXY=N proxies, the X-Forwarded-For entry N from the end, the one the outermost proxy
 * added (each proxy appends the address it was reached from; entries before are whatever the
 * client sent). An IPv6 client counts per /64, the block one subscriber is commonly given whole;
 * an IPv4-mapped IPv6 peer counts as its IPv4 address.
 */
import type { Context } from "hono";
import { getConnInfo } from "hono/deno";
import { parseV4, parseV6, v4FromGroups } from "../core/ip_address.ts";

/** The client's address or /64 block as text, or null when the request carries none. */
export function clientAddress(c: Context, proxies: number): string | null {
  const forwarded = proxies > 0 ? c.req.header("x-forwarded-for") : undefined;
  let raw: string | undefined;
  if (forwarded) {
    const entries = forwarded.split(",");
    raw = entries[Math.max(0, entries.length - proxies)].trim();
  } else {
    try {
      raw = getConnInfo(c).remote.address;
    } catch {
      raw = undefined; // not served by Deno.serve (app.request in a script)
    }
  }
  return raw ? clientKey(raw) : null;
}

function clientKey(raw: string): string | null {
  const text = raw.replace(/^\[|\]$/g, "");
  const v4 = parseV4(text);
  if (v4) return v4.join(".");
  const v6 = parseV6(text);
  if (!v6) return null;
  if (v6.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff) {
    return v4FromGroups(v6[6], v6[7]).join(".");
  }
  return v6.slice(0, 4).map((g) => g.toString(16)).join(":") + "::/64";
}
