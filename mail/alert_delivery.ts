/**
 * The delivery loop of usage alerts: claims due alerts from the KV outbox, sends each by SMTP,
 * and marks it delivered, or schedules a retry with exponential backoff. Undelivered alerts
 * stay in the outbox, so a restarted process picks them up. Runs on the wall clock (retries must
 * happen even when a test freezes the meter's clock).
 *
 * @example
 * const delivery = new AlertDelivery(kv, parseSmtpUrl(SMTP_URL, SMTP_FROM), log);
 * delivery.start();
 * meter.onAlert = () => delivery.wake();
 * await delivery.stop();
 */
import {
  type Alert,
  claim,
  markDelivered,
  markFailed,
  markLapsed,
  markUnsent,
  outboxEntries,
} from "../metering/alerts.ts";
import { type Mail, NotMailable, sendMail, type SmtpConfig, SmtpError } from "./smtp.ts";
import type { Log } from "../core/log.ts";
import { PollLoop } from "../core/poll_loop.ts";

export interface DeliveryTiming {
  /** How often the outbox is scanned when nothing wakes the loop. */
  pollMs: number;
  /** First retry delay; doubles per failed attempt up to maxDelayMs. */
  retryMs: number;
  maxDelayMs: number;
  /** How long a claimed alert is reserved for this process before another may send it. */
  leaseMs: number;
}

export const DEFAULT_TIMING: DeliveryTiming = {
  pollMs: 5_000,
  retryMs: 30_000,
  maxDelayMs: 3_600_000,
  leaseMs: 60_000,
};

/** How long after its period's end an alert may still be sent. */
const LAPSE_AFTER_MS = 24 * 3600 * 1000;

export class AlertDelivery extends PollLoop {
  readonly #kv: Deno.Kv;
  readonly #smtp: SmtpConfig;
  readonly #timing: DeliveryTiming;

  constructor(kv: Deno.Kv, smtp: SmtpConfig, log: Log, timing: Partial<DeliveryTiming> = {}) {
    super("alert delivery", timing.pollMs ?? DEFAULT_TIMING.pollMs, log);
    this.#kv = kv;
    this.#smtp = smtp;
    this.#timing = { ...DEFAULT_TIMING, ...timing };
  }

  protected async pass(): Promise<boolean> {
    await this.deliverDue();
    return false;
  }

  /** One pass over the outbox; returns how many alerts were delivered. */
  async deliverDue(): Promise<number> {
    let delivered = 0;
    for (const { accountId, alertId } of await outboxEntries(this.#kv)) {
      // Each send may wait out the mail server's timeout: a stop must not wait for every alert
      // listed (those left stay in the outbox for the next process).
      if (this.stopping) break;
      try {
        const alert = await claim(this.#kv, accountId, alertId, Date.now(), this.#timing.leaseMs);
        if (!alert) continue;
        // Alerts wait in the outbox for as long as no mail server takes them (none configured,
        // or one down for weeks): those of periods long over are not sent once one does.
        if (alert.period_end + LAPSE_AFTER_MS < Date.now()) {
          await markLapsed(this.#kv, alert);
          continue;
        }
        if (await this.#send(alert)) delivered++;
      } catch (e) {
        this.log.error(`alert delivery: ${alertId} failed in the store`, e);
      }
    }
    return delivered;
  }

  async #send(alert: Alert): Promise<boolean> {
    try {
      await sendMail(this.#smtp, alertMail(alert));
    } catch (e) {
      // An address stored before addresses had to be on the public internet (probe EV), which
      // sendMail does not hand to the relay: no later try would send it.
      if (e instanceof NotMailable) {
        await markUnsent(this.#kv, alert, e.message);
        return false;
      }
      const delay = Math.min(this.#timing.maxDelayMs, this.#timing.retryMs * 2 ** alert.attempts);
      this.log.error(
        `alert ${alert.id} to ${alert.to} not delivered (attempt ${alert.attempts + 1})`,
        e,
      );
      await markFailed(this.#kv, alert, this.#shown(e), Date.now() + delay);
      return false;
    }
    await markDelivered(this.#kv, alert, Date.now());
    return true;
  }

  /**
   * Why an attempt failed, as the account's owner reads it on the Usage page: the mail server's
   * reply code, or that it did not answer or could not be reached. The error's own words
   * ("connect ECONNREFUSED 10.0.0.5:25", a relay's host name in its reply) named the operator's
   * network to every user (probe DE); they go to the log only.
   */
  #shown(e: unknown): string {
    if (e instanceof SmtpError && e.code > 0) return `the mail server refused it (${e.code})`;
    const message = e instanceof Error ? e.message : "";
    return /timeout|timed out|within \d+ ms|never received/i.test(message)
      ? `no answer from the mail server within ${this.#smtp.timeoutMs} ms`
      : "the mail server could not be reached";
  }
}

export function alertMail(a: Alert): Mail {
  const reset = new Date(a.period_end).toISOString().replace("T", " ").slice(0, 16) + " UTC";
  const subject = a.threshold >= 100
    ? "Shelf: your monthly credits are used up (100%)"
    : `Shelf: ${a.threshold}% of your monthly credits used`;
  const text = [
    a.threshold >= 100
      ? `Your account has used all ${a.included} credits of this period. Calls are refused with 429 quota_exhausted until the credits reset.`
      : `Your account has used ${a.used} of its ${a.included} credits this period (${a.threshold}% or more).`,
    "",
    `Plan: ${a.plan}`,
    `Credits reset: ${reset}`,
    "",
    "Usage, keys and alert settings are in the dashboard at /dashboard.",
  ].join("\n");
  return { to: a.to, subject, text };
}
