/**
 * Whether the hosts that take a domain's mail are on the public internet. An address passes
 * sign-up by its name (metering/accounts.ts mailableEmail), but a name says nothing of where it
 * leads: x@10.0.0.5.nip.io, or a domain whose MX record names a private host, had the operator's
 * relay open SMTP into its own network for anyone who may sign up (probe GC). The relay does its
 * own lookup, so this is a second line and no guarantee (a DNS server may answer it differently),
 * and a lookup that fails or times out refuses nothing: mail must not stop because DNS is slow.
 */
import { isPublicAddress, parseV4, parseV6 } from "../core/ip_address.ts";
import { resolveHost, untilAborted } from "../core/resolve_host.ts";

/** A domain's MX exchanges, most preferred first, and a host's addresses; a name with none gives []. */
export interface MailResolver {
  mx(domain: string, signal: AbortSignal): Promise<string[]>;
  addresses(host: string, signal: AbortSignal): Promise<string[]>;
}

/** The whole check's time, all lookups together (probe GI: one after another, 16 s a mail). */
const LOOKUP_MS = 2_000;

export const systemResolver: MailResolver = {
  mx: (domain, signal) =>
    untilAborted(
      Deno.resolveDns(domain, "MX").then(
        (records) => records.sort((a, b) => a.preference - b.preference).map((r) => r.exchange),
        () => [],
      ),
      signal,
      [],
    ),
  addresses: resolveHost,
};

/**
 * A host of `domain`'s mail (every MX exchange, or the domain itself when it names none, as SMTP
 * falls back to) that resolves to an address off the public internet, or null. A domain naming
 * more than MAX_EXCHANGES is refused: only the first few were looked at, and a private host
 * listed ninth, most preferred, passed (probe GI).
 */
export async function privateMailHost(
  domain: string,
  resolve: MailResolver = systemResolver,
): Promise<string | null> {
  const signal = AbortSignal.timeout(LOOKUP_MS);
  // A "null MX" (RFC 7505: the exchange "."), which takes no mail, leaves the domain's own.
  // A lookup that fails or runs out of time refuses nothing.
  const exchanges = (await resolve.mx(domain, signal).catch(() => []))
    .map((h) => h.replace(/\.$/, "")).filter(Boolean);
  if (exchanges.length > MAX_EXCHANGES) return `${domain} (${exchanges.length} mail hosts)`;
  const hosts = exchanges.length ? exchanges : [domain];
  const found = await Promise.all(hosts.map(async (host) => {
    const literal = parseV4(host) !== null || parseV6(host) !== null;
    const addresses = literal ? [host] : await resolve.addresses(host, signal).catch(() => []);
    const bad = addresses.find((a) => !isPublicAddress(a));
    return bad ? `${host} (${bad})` : null;
  }));
  return found.find((f) => f !== null) ?? null;
}

/** Mail hosts a domain may name: real domains name a handful. */
const MAX_EXCHANGES = 16;
