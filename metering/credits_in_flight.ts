/**
 * Credits this process has charged to calls still running, per account. A call's credits are
 * reserved before its upstream work and given back if it fails, so a burst can be refused with
 * 429 `quota_exhausted` while every credit is still there: 300 concurrent calls on 100 credits,
 * all failing, left 200 callers told the credits were "used up" until the period's end, and all
 * 100 credits unspent. Knowing that credits are held, the refusal says so and when to retry.
 * Calls running in other processes are not seen: their holds read as spent.
 */
const held = new Map<string, number>();

export function hold(accountId: string, credits: number): void {
  if (credits > 0) held.set(accountId, (held.get(accountId) ?? 0) + credits);
}

export function release(accountId: string, credits: number): void {
  const left = (held.get(accountId) ?? 0) - credits;
  if (left > 0) held.set(accountId, left);
  else held.delete(accountId);
}

/** Credits of the account's calls running in this process. */
export function heldCredits(accountId: string): number {
  return held.get(accountId) ?? 0;
}

/** Every account's credits held by calls running in this process, for a stop to name. */
export function allHeld(): [accountId: string, credits: number][] {
  return [...held];
}
