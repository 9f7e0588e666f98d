/**
 * Sign-in lockout in KV, shared by every instance on the store (issue 13.5): at most LIMIT
 * password checks per email within WINDOW_MS. An attempt takes its slot by an atomic
 * check-and-increment BEFORE the password is checked, so a parallel burst cannot slip more
 * guesses through than the limit; a correct password clears the count.
 */
import { KV } from "./kv_layout.ts";
import { hashKey } from "./api_key.ts";

export const SIGNIN_LIMIT = 10;
export const SIGNIN_WINDOW_MS = 15 * 60 * 1000;

interface Failures {
  count: number;
  since: number;
}

/** Takes one attempt's slot; false when the email has used all of its window's attempts. */
export async function reserveAttempt(kv: Deno.Kv, email: string, now: number): Promise<boolean> {
  const key = KV.signinAttempts(hashKey(email));
  for (let tries = 0; tries < 50; tries++) {
    const cur = await kv.get<Failures>(key);
    const live = cur.value && now - cur.value.since < SIGNIN_WINDOW_MS ? cur.value : null;
    if (live && live.count >= SIGNIN_LIMIT) return false;
    const next: Failures = live
      ? { count: live.count + 1, since: live.since }
      : { count: 1, since: now };
    const left = next.since + SIGNIN_WINDOW_MS - now;
    try {
      const r = await kv.atomic().check(cur).set(key, next, { expireIn: Math.max(1, left) })
        .commit();
      if (r.ok) return true;
    } catch {
      // "database is locked" under contention: if the write landed after all, the re-read counts
      // it and this attempt takes one more slot, which errs on the locked side.
    }
    await new Promise((r) => setTimeout(r, Math.random() * 2 * Math.min(tries, 10)));
  }
  return false; // too contended: refusing is the safe answer
}

export async function clearAttempts(kv: Deno.Kv, email: string): Promise<void> {
  await kv.delete(KV.signinAttempts(hashKey(email)));
}
