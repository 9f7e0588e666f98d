/**
 * Sends watch events to their webhooks: claims due events from the KV outbox, checks the target
 * again (SSRF rules), POSTs the signed body, and on anything but a 2xx answer tries again with
 * exponential back-off until a day has passed since the event. Every attempt is noted on the
 * watch (API and dashboard). Redirects are not followed: a 3xx is a failed attempt, so a public
 * host cannot bounce the request into a private one.
 */
import { PollLoop } from "../core/poll_loop.ts";
import type { Log } from "../core/log.ts";
import { KV } from "../metering/kv_layout.ts";
import {
  claimDueDeliveries,
  type Delivery,
  DELIVERY_NOTES,
  settleDelivery,
  updateWatch,
  type Watch,
} from "./store.ts";
import { signatureHeader } from "./signature.ts";
import {
  checkedLookup,
  RefusedTarget,
  type Resolve,
  webhookHost,
  webhookUrlRefusal,
} from "./webhook_target.ts";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";

export interface WebhookTiming {
  pollMs: number;
  /** First retry delay; doubles per failed attempt up to maxDelayMs. */
  retryMs: number;
  maxDelayMs: number;
  /** After this long since the event, a failed attempt is the last. */
  giveUpMs: number;
  /** How long a claimed event is this instance's to send. */
  leaseMs: number;
  /** One attempt's limit, connection to last byte. */
  timeoutMs: number;
}

/** Events claimed and sent together in one pass. */
const PASS = 50;

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = {
  pollMs: 5_000,
  retryMs: 30_000,
  maxDelayMs: 3_600_000,
  giveUpMs: 86_400_000,
  leaseMs: 60_000,
  timeoutMs: 10_000,
};

export interface WebhookOptions {
  allowPrivate: boolean;
  timing?: Partial<WebhookTiming>;
  resolve?: Resolve;
}

export class WebhookDelivery extends PollLoop {
  readonly #kv: Deno.Kv;
  readonly #allowPrivate: boolean;
  readonly #lookup: LookupFunction;
  readonly timing: WebhookTiming;

  constructor(kv: Deno.Kv, log: Log, opts: WebhookOptions) {
    const timing = { ...DEFAULT_WEBHOOK_TIMING, ...opts.timing };
    super("webhook delivery", timing.pollMs, log);
    this.#kv = kv;
    this.#allowPrivate = opts.allowPrivate;
    this.#lookup = checkedLookup(opts.resolve);
    this.timing = timing;
  }

  /** One pass over the outbox; a full one means more may be due. */
  protected async pass(): Promise<boolean> {
    const due = await claimDueDeliveries(this.#kv, Date.now(), this.timing.leaseMs, PASS);
    await this.settleEach(due, (d) => this.#attempt(d), (d) => `webhook ${d.id}`);
    return due.length === PASS;
  }

  async #attempt(d: Delivery): Promise<void> {
    const watch = (await this.#kv.get<Watch>(KV.watch(d.watch_id))).value;
    if (!watch) {
      await settleDelivery(this.#kv, d, null); // the watch was deleted: its events go with it
      return;
    }
    const result = await this.#send(watch, d);
    const delivered = result.startsWith("delivered");
    const now = Date.now();
    const giveUp = !delivered && now - d.created_at >= this.timing.giveUpMs;
    const delay = Math.min(this.timing.maxDelayMs, this.timing.retryMs * 2 ** (d.attempts - 1));
    await settleDelivery(this.#kv, d, delivered || giveUp ? null : now + delay);
    const note = {
      event_id: d.id,
      at: new Date(now).toISOString(),
      attempt: d.attempts,
      result: giveUp ? `${result}; given up after a day` : result,
      delivered,
    };
    await updateWatch(this.#kv, d.watch_id, (w) => ({
      ...w,
      deliveries: [note, ...w.deliveries].slice(0, DELIVERY_NOTES),
    }));
    if (!delivered) {
      // The host only: a webhook URL may carry a token in its path or query.
      this.log.error(
        `webhook ${d.id} of watch ${d.watch_id} to ${webhookHost(watch.webhook_url)}: ${result}`,
      );
    }
  }

  /** "delivered (HTTP 2xx)" or what went wrong, in a few words. */
  async #send(watch: Watch, d: Delivery): Promise<string> {
    const shape = webhookUrlRefusal(watch.webhook_url, this.#allowPrivate);
    if (shape) return `refused: ${shape}`;
    const url = new URL(watch.webhook_url);
    // node:http(s) rather than fetch: fetch resolves the name itself, so a check made before it
    // could be answered differently at the connection (DNS rebinding); node's `lookup` option
    // makes the check the connection's own lookup. Named hosts only: a literal needs none.
    const lookup = shape === undefined ? this.#lookup : undefined;
    const signal = AbortSignal.timeout(this.timing.timeoutMs);
    const status = await new Promise<number | Error>((done) => {
      const req = (url.protocol === "https:" ? https : http).request(url, {
        method: "POST",
        lookup,
        signal,
        headers: {
          "content-type": "application/json",
          "content-length": String(new TextEncoder().encode(d.body).length),
          "user-agent": "Shelf-Webhooks/1",
          "shelf-event-id": d.id,
          "shelf-signature": signatureHeader(watch.secret, d.body, Math.floor(Date.now() / 1000)),
        },
      }, (res) => {
        done(res.statusCode ?? 0);
        res.destroy(); // the answer's body is not read
      });
      req.on("error", (e) => done(e));
      req.end(d.body);
    }).catch((e) => (e instanceof Error ? e : new Error(String(e)))); // a request refused outright
    if (typeof status === "number") {
      return status >= 200 && status < 300 ? `delivered (HTTP ${status})` : `HTTP ${status}`;
    }
    if (status instanceof RefusedTarget) return `refused: ${status.message}`;
    return signal.aborted ? "timeout" : `connection failed (${status.name})`;
  }
}
