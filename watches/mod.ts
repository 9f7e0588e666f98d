/**
 * Watches as one service (INTERFACE.md "Beyond the spec"): the settings, the refresh scheduler and
 * the webhook delivery, started and stopped together. app.ts builds it; routes/watches.ts serves it.
 */
import type { DataSource } from "../upstream/data_source.ts";
import { type SchedulerDeps, type SchedulerTiming, WatchScheduler } from "./scheduler.ts";
import { WebhookDelivery, type WebhookTiming } from "./webhook_delivery.ts";
import type { Resolve } from "./webhook_target.ts";

export interface WatchOptions {
  /** WATCH_MIN_SECONDS: the shortest refresh interval a watch may ask for (default 3600). */
  minSeconds?: number;
  /** WEBHOOK_ALLOW_PRIVATE=1: webhooks may target private and loopback hosts. */
  allowPrivate?: boolean;
  /** Start the scheduler and delivery loops (main.ts does; most tests need only the routes). */
  run?: boolean;
  /** Where refreshes fetch (main.ts: behind the result cache, so a refresh is never stale). */
  source?: DataSource;
  scheduler?: Partial<SchedulerTiming>;
  webhooks?: Partial<WebhookTiming>;
  resolve?: Resolve;
}

export const DEFAULT_WATCH_MIN_SECONDS = 3_600;

export class Watches {
  readonly minSeconds: number;
  readonly allowPrivate: boolean;
  readonly resolve?: Resolve;
  readonly scheduler: WatchScheduler;
  readonly delivery: WebhookDelivery;
  readonly #run: boolean;

  constructor(deps: Omit<SchedulerDeps, "onEvent">, opts: WatchOptions = {}) {
    this.minSeconds = opts.minSeconds ?? DEFAULT_WATCH_MIN_SECONDS;
    this.allowPrivate = opts.allowPrivate ?? false;
    this.resolve = opts.resolve;
    this.#run = opts.run ?? false;
    this.delivery = new WebhookDelivery(deps.kv, deps.log, {
      allowPrivate: this.allowPrivate,
      timing: opts.webhooks,
      resolve: opts.resolve,
    });
    this.scheduler = new WatchScheduler(
      {
        ...deps,
        dataSource: opts.source ?? deps.dataSource,
        onEvent: () => this.delivery.wake(),
        minSeconds: this.minSeconds,
      },
      opts.scheduler,
    );
  }

  start(): void {
    if (!this.#run) return;
    this.scheduler.start();
    this.delivery.start();
  }

  /** Stops both loops; webhook attempts still running after `graceMs` are cut (delivery.stop). */
  async stop(graceMs?: number): Promise<void> {
    await Promise.all([this.scheduler.stop(), this.delivery.stop(graceMs)]);
  }
}
