/**
 * A background pass run every `pollMs`, or at once when woken or when the last pass says more may
 * be waiting: the shape of every loop that works off a KV outbox or index (usage alerts, watch
 * refreshes, webhook deliveries), since kv.enqueue is not on every backend. A pass that throws is
 * logged and the loop goes on; stop() waits for the pass under way, so a drain never cuts one in
 * half. Subclasses supply the pass.
 */
import type { Log } from "./log.ts";

export abstract class PollLoop {
  readonly #pollMs: number;
  readonly #name: string;
  protected readonly log: Log;
  #running: Promise<void> | null = null;
  #stopped = false;
  #wake: (() => void) | null = null;
  #woken = false;

  constructor(name: string, pollMs: number, log: Log) {
    this.#name = name;
    this.#pollMs = pollMs;
    this.log = log;
  }

  /** One pass; true when more work may be waiting, so that the next pass starts at once. */
  protected abstract pass(): Promise<boolean>;

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Runs a pass now instead of at the next poll. */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Whether stop() has been called: a pass of many items checks it between them. */
  protected get stopping(): boolean {
    return this.#stopped;
  }

  /** Ends the loop after the pass under way, if any. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  /** Works on every item at once; one that fails is logged as `describe(item)`, the rest go on. */
  protected async settleEach<T>(
    items: T[],
    work: (item: T) => Promise<void>,
    describe: (item: T) => string,
  ): Promise<void> {
    const settled = await Promise.allSettled(items.map(work));
    settled.forEach((r, i) => {
      if (r.status === "rejected") {
        this.log.error(`${describe(items[i])} failed in the store`, r.reason);
      }
    });
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      this.#woken = false;
      let more = false;
      try {
        more = await this.pass();
      } catch (e) {
        this.log.error(`${this.#name}: pass failed`, e);
      }
      if (this.#stopped || this.#woken || more) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#wake = null;
          resolve();
        };
        const timer = setTimeout(done, this.#pollMs);
        this.#wake = done;
      });
    }
  }
}
