/**
 * A host's addresses, both families, through the runtime's resolver: the webhook target rules
 * (watches/webhook_target.ts) and the mail host check (mail/mail_host.ts) judge what a name leads
 * to by them. A family that fails or has none gives nothing; `signal` ends both lookups.
 */
export async function resolveHost(host: string, signal?: AbortSignal): Promise<string[]> {
  const options = signal ? { signal } : undefined;
  const [a, aaaa] = await Promise.all([
    Deno.resolveDns(host, "A", options).catch(() => [] as string[]),
    Deno.resolveDns(host, "AAAA", options).catch(() => [] as string[]),
  ]);
  return [...a, ...aaaa];
}
