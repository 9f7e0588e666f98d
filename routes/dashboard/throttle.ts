/**
 * Failed sign-ins per email, in memory: after 10 failures within 15 minutes the email is refused
 * until the window ends. Per process; enough to make guessing a password slow.
 */
const LIMIT = 10;
const WINDOW_MS = 15 * 60 * 1000;
const MAX_TRACKED = 10_000;

export class SignInThrottle {
  readonly #failures = new Map<string, { count: number; since: number }>();

  allows(email: string, now: number): boolean {
    const f = this.#failures.get(email);
    if (!f || now - f.since > WINDOW_MS) return true;
    return f.count < LIMIT;
  }

  failed(email: string, now: number): void {
    const f = this.#failures.get(email);
    if (!f || now - f.since > WINDOW_MS) {
      if (this.#failures.size >= MAX_TRACKED) this.#failures.clear();
      this.#failures.set(email, { count: 1, since: now });
    } else f.count++;
  }

  succeeded(email: string): void {
    this.#failures.delete(email);
  }
}
