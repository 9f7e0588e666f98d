/**
 * A host's addresses, both families, through the runtime's resolver: the webhook target rules
 * (watches/webhook_target.ts) and the mail host check (mail/mail_host.ts) judge what a name leads
 * to by them. A family that fails or has none gives nothing; once `signal` aborts, nothing is
 * given. `nameServer` is where to ask instead of the system's resolver (tests run their own).
 */
export function resolveHost(
  host: string,
  signal?: AbortSignal,
  nameServer?: Deno.ResolveDnsOptions["nameServer"],
): Promise<string[]> {
  const options = nameServer ? { nameServer } : undefined;
  const both = Promise.all([
    Deno.resolveDns(host, "A", options).catch(() => [] as string[]),
    Deno.resolveDns(host, "AAAA", options).catch(() => [] as string[]),
  ]).then(([a, aaaa]) => [...a, ...aaaa]);
  return untilAborted(both, signal, []);
}

/**
 * `lookup`'s answer, or `none` once `signal` aborts. The signal is never handed to the runtime's
 * resolver: Deno 2.9's resolveDns, given one, drops an answer that comes after about a second and
 * fails at two, whatever the signal's own time (probe GU: a name answering in 1.1 s was refused as
 * not resolving within a 3 s bound). The lookup goes on to the resolver's own timeout, unread.
 */
export function untilAborted<T>(
  lookup: Promise<T>,
  signal: AbortSignal | undefined,
  none: T,
): Promise<T> {
  if (!signal) return lookup;
  if (signal.aborted) return Promise.resolve(none);
  return new Promise<T>((resolve, reject) => {
    const stop = () => resolve(none);
    signal.addEventListener("abort", stop, { once: true });
    lookup.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}
