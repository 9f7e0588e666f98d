/**
 * Who a request came from, for limits kept per client: the connection's peer, or, behind
 * TRUST_PROXY=N proxies, the X-Forwarded-For entry N from the end, the one the outermost proxy
 * added (each proxy appends the address it was reached from; entries before are whatever the
 * client sent). Some proxies append the client's port too (`198.51.100.7:51234`,
 * `[2001:db8::1]:443`): it is dropped. An entry that is still no address (`unknown`, a name) is
 * not trusted to mean "no client": the request then counts as the connection's peer, the proxy,
 * so that such clients share one bucket rather than none. An IPv6 client counts per /64, the
 * block one subscriber is commonly given whole, and its /48 is its network (window_slots.ts
 * gives a network a few clients' limits); an IPv4-mapped IPv6 peer counts as its IPv4 address.
 */
import type { Context } from "hono";
import { getConnInfo } from "hono/deno";
import { parseV4, parseV6, v4FromGroups } from "../core/ip_address.ts";
import { type Client, NO_CLIENT } from "../metering/window_slots.ts";

/** The client's address or /64 block, and /48, as text; null where the request carries none. */
export function clientAddress(c: Context, proxies: number): Client {
  const forwarded = proxies > 0 ? c.req.header("x-forwarded-for") : undefined;
  if (forwarded) {
    const entries = forwarded.split(",");
    const entry = clientKey(withoutPort(entries[Math.max(0, entries.length - proxies)].trim()));
    if (entry) return entry;
  }
  let peer: string | undefined;
  try {
    peer = getConnInfo(c).remote.address;
  } catch {
    peer = undefined; // not served by Deno.serve (app.request in a script)
  }
  return (peer && clientKey(withoutPort(peer))) || NO_CLIENT;
}

/** The address of `host:port` or `[v6]:port`; any other text as it is. */
function withoutPort(entry: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d{1,5})?$/.exec(entry);
  if (bracketed) return bracketed[1];
  const v4 = /^([\d.]+):\d{1,5}$/.exec(entry);
  return v4 ? v4[1] : entry;
}

function clientKey(text: string): Client | null {
  const v4 = parseV4(text);
  if (v4) return { address: v4.join("."), network: null };
  const v6 = parseV6(text);
  if (!v6) return null;
  if (v6.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff) {
    return { address: v4FromGroups(v6[6], v6[7]).join("."), network: null };
  }
  const prefix = (groups: number) => v6.slice(0, groups).map((g) => g.toString(16)).join(":");
  return { address: `${prefix(4)}::/64`, network: `${prefix(3)}::/48` };
}
