/**
 * Whether the hosts that take a domain's mail are on the public internet. An address passes
 * sign-up by its name (metering/accounts.ts mailableEmail), but a name says nothing of where it
 * leads: x@10.0.0.5.nip.io, or a domain whose MX record names a private host, had the operator's
 * relay open SMTP into its own network for anyone who may sign up (probe GC). The relay does its
 * own lookup, so this is a second line and no guarantee (a DNS server may answer it differently),
 * and a lookup that fails or times out refuses nothing: mail must not stop because DNS is slow.
 */
import { isPublicAddress, parseV4, parseV6 } from "../core/ip_address.ts";

/** MX exchanges, then each exchange's addresses; a name with none gives []. */
export interface MailResolver {
  mx(domain: string): Promise<string[]>;
  addresses(host: string): Promise<string[]>;
}

const LOOKUP_MS = 2_000;

export const systemResolver: MailResolver = {
  mx: (domain) =>
    Deno.resolveDns(domain, "MX", { signal: AbortSignal.timeout(LOOKUP_MS) })
      .then((records) => records.map((r) => r.exchange), () => []),
  addresses: async (host) => {
    const signal = AbortSignal.timeout(LOOKUP_MS);
    const [a, aaaa] = await Promise.all([
      Deno.resolveDns(host, "A", { signal }).catch(() => [] as string[]),
      Deno.resolveDns(host, "AAAA", { signal }).catch(() => [] as string[]),
    ]);
    return [...a, ...aaaa];
  },
};

/**
 * A host of `domain`'s mail (its MX exchanges, or the domain itself when it names none, as SMTP
 * falls back to) that resolves to an address off the public internet, or null.
 */
export async function privateMailHost(
  domain: string,
  resolve: MailResolver = systemResolver,
): Promise<string | null> {
  // A "null MX" (RFC 7505: the exchange "."), which takes no mail, leaves the domain's own.
  const exchanges = (await resolve.mx(domain)).map((h) => h.replace(/\.$/, "")).filter(Boolean);
  const hosts = exchanges.length ? exchanges.slice(0, MAX_EXCHANGES) : [domain];
  for (const host of hosts) {
    const literal = parseV4(host) !== null || parseV6(host) !== null;
    const addresses = literal ? [host] : await resolve.addresses(host);
    const bad = addresses.find((a) => !isPublicAddress(a));
    if (bad) return `${host} (${bad})`;
  }
  return null;
}

/** Exchanges looked up at most: real domains name a handful. */
const MAX_EXCHANGES = 8;
