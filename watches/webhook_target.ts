/**
 * Whether a webhook URL may be called (INTERFACE.md: a host that resolves to a private or
 * loopback address is refused unless WEBHOOK_ALLOW_PRIVATE=1). Without that rule a watch would
 * let any client make the server POST into the operator's own network (cloud metadata at
 * 169.254.169.254, admin ports on localhost, the office LAN).
 *
 * Checked when the watch is created, for an early answer, and again at every delivery, where the
 * connection's own name lookup (`checkedLookup`) resolves the host once, refuses a private
 * answer, and connects only to the addresses it checked: a DNS server that answers differently
 * between a check and the connection (DNS rebinding) has no second lookup to change.
 *
 * The server's own addresses are refused too, public ones included: a connection from the host to
 * its own public address goes over loopback, past the firewall that hides whatever listens on
 * 0.0.0.0 there (a database's HTTP port, a metrics agent), and a watch's delivery notes would tell
 * which ports are open.
 */
import type { LookupFunction } from "node:net";
import { isPublicAddress, parseV4, parseV6, v4FromGroups } from "../core/ip_address.ts";
import { resolveHost } from "../core/resolve_host.ts";

export type Resolve = (host: string, signal?: AbortSignal) => Promise<string[]>;

/**
 * How long a webhook URL's name may take to resolve when a watch is created or changed: a DNS
 * server that never answers held the client's call for the resolver's own 15 s (probe GO).
 */
const LOOKUP_MS = 3_000;

/** The server's own addresses, canonical (see canonical). */
export type OwnAddresses = () => ReadonlySet<string>;

let own: { at: number; set: ReadonlySet<string> } | null = null;

/** The addresses of this machine's interfaces, looked up at most once a minute. */
export const ownAddresses: OwnAddresses = () => {
  const now = Date.now();
  if (!own || now - own.at > 60_000) {
    let found: string[] = [];
    try {
      found = Deno.networkInterfaces().map((i) => i.address);
    } catch {
      // No --allow-sys, or a platform without interfaces (Deno Deploy): only the classes count.
    }
    own = { at: now, set: new Set(found.map(canonical).filter((a) => a !== null)) };
  }
  return own.set;
};

/** One spelling per address: dotted IPv4 (an IPv4-mapped IPv6 address too), or 8 hex groups. */
export function canonical(address: string): string | null {
  const v4 = parseV4(address);
  if (v4) return v4.join(".");
  const v6 = parseV6(address.replace(/%.*$/, "")); // a link-local address's zone
  if (!v6) return null;
  if (v6.slice(0, 5).every((x) => x === 0) && v6[5] === 0xffff) {
    return v4FromGroups(v6[6], v6[7]).join(".");
  }
  return v6.map((g) => g.toString(16)).join(":");
}

/** Why `raw` may not be called, or null when it may. */
export async function webhookRefusal(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolve = resolveHost,
  self: OwnAddresses = ownAddresses,
): Promise<string | null> {
  const shape = webhookUrlRefusal(raw, allowPrivate, self);
  if (shape !== undefined) return shape;
  const addresses = await resolve(hostOf(new URL(raw)), AbortSignal.timeout(LOOKUP_MS))
    .catch(() => []);
  return addressRefusal(addresses, self);
}

/**
 * What can be told of `raw` without resolving it: why it may not be called, null when it may
 * (an IP literal, or any host with `allowPrivate`), undefined when its name must be resolved.
 */
export function webhookUrlRefusal(
  raw: string,
  allowPrivate: boolean,
  self: OwnAddresses = ownAddresses,
): string | null | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "only http and https URLs";
  if (url.username || url.password) return "credentials in the URL are not allowed";
  if (allowPrivate) return null;
  const host = hostOf(url);
  if (host === "localhost" || host.endsWith(".localhost")) return "a loopback host";
  return isIpLiteral(host) ? addressRefusal([host], self) : undefined;
}

/**
 * Why a host with these addresses may not be called, or null: every one must be public, and none
 * this server's own.
 */
function addressRefusal(addresses: string[], self: OwnAddresses): string | null {
  if (!addresses.length) return "the host does not resolve";
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (bad !== undefined) return `the host resolves to a private address (${bad})`;
  const mine = self();
  const itself = addresses.find((a) => mine.has(canonical(a) ?? ""));
  return itself === undefined ? null : `the host is this server itself (${itself})`;
}

// The URL parser has already normalised IPv4 in any notation (2130706433, 0x7f.1) to dotted form.
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
}

/** A webhook host that the connection's lookup refused; the message says why. */
export class RefusedTarget extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "RefusedTarget";
  }
}

/**
 * A name lookup for node:http(s) requests that resolves with `resolve`, refuses (RefusedTarget)
 * unless every address is public, and hands the connection exactly the addresses it checked.
 * Node's connection code asks for one address or for all (`all: true`); both are answered.
 */
export function checkedLookup(
  resolve: Resolve = resolveHost,
  self: OwnAddresses = ownAddresses,
): LookupFunction {
  return (host, options, callback) => {
    const all = typeof options === "object" && options !== null &&
      (options as { all?: boolean }).all === true;
    resolve(host.toLowerCase()).then((addresses) => {
      const refusal = addressRefusal(addresses, self);
      if (refusal) return callback(new RefusedTarget(refusal), "");
      const found = addresses.map((address) => ({
        address,
        family: address.includes(":") ? 6 : 4,
      }));
      if (all) callback(null, found);
      else callback(null, found[0].address, found[0].family);
    }, (e) => callback(e instanceof Error ? e : new Error(String(e)), ""));
  };
}

function isIpLiteral(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(":");
}

/** The host of a webhook URL, for logs and the dashboard: its path and query may carry a token. */
export function webhookHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid URL)";
  }
}
