/**
 * Guesses at the admin token, per client: past MAX_FAILURES failed tries in a minute, a client's
 * admin requests are refused with 429 before any token is compared, and the operator is told once
 * a minute per client. Unlimited, one client tried about 33,000 tokens a second, all 401s, with
 * nothing in the logs but 401 lines that did not say who sent them (probe AS). Kept in memory (per
 * process), at most MAX_CLIENTS clients, the oldest forgotten.
 */
import type { Context } from "hono";
import { ApiError } from "../core/api_error.ts";
import { setBounded } from "../core/bounded_map.ts";
import { clientAddress } from "./client_address.ts";

export const MAX_FAILURES = 20;
const WINDOW_MS = 60_000;
const MAX_CLIENTS = 10_000;

interface Window {
  start: number;
  failures: number;
  /** When this client's guessing was last reported. */
  told: number;
}

export class AdminGuard {
  readonly #windows = new Map<string, Window>();

  constructor(
    private readonly trustProxy: number,
    private readonly report: (line: Record<string, unknown>) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** The client's key, or throws 429 while it is over its failures. */
  admit(c: Context): string {
    // An IPv6 client by its /48: its 65,536 /64s would each get a whole allowance of guesses.
    const client = clientAddress(c, this.trustProxy);
    const who = client.network ?? client.address ?? "unknown";
    const w = this.#windows.get(who);
    if (w && this.now() - w.start < WINDOW_MS && w.failures >= MAX_FAILURES) {
      const retry = Math.max(1, Math.ceil((w.start + WINDOW_MS - this.now()) / 1000));
      throw new ApiError(
        429,
        "rate_limited",
        "Too many failed admin authentications from this client; retry later.",
        { "Retry-After": String(retry) },
      );
    }
    return who;
  }

  /** A failed try of `who`'s. */
  failed(who: string): void {
    const t = this.now();
    let w = this.#windows.get(who);
    if (!w || t - w.start >= WINDOW_MS) w = { start: t, failures: 0, told: w?.told ?? -Infinity };
    w.failures++;
    setBounded(this.#windows, who, w, MAX_CLIENTS);
    if (w.failures >= MAX_FAILURES && t - w.told >= WINDOW_MS) {
      w.told = t;
      this.report({ event: "admin_auth_failures", client: who, failures: w.failures });
    }
  }
}
