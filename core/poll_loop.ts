/**
 * A background pass run every `pollMs`, or at once when woken: the shape of every loop that works
 * off a KV outbox or index (usage alerts, watch refreshes, webhook deliveries), since kv.enqueue
 * is not on every backend. A pass that throws is logged and the loop goes on; stop() waits for
 * the pass under way, so a drain never cuts one in half.
 */
import type { Log } from "./log.ts";

export class PollLoop {
  readonly #pass: () => Promise<unknown>;
  readonly #pollMs: number;
  readonly #log: Log;
  readonly #name: string;
  #running: Promise<void> | null = null;
  #stopped = false;
  #wake: (() => void) | null = null;
  #woken = false;

  constructor(name: string, pass: () => Promise<unknown>, pollMs: number, log: Log) {
    this.#name = name;
    this.#pass = pass;
    this.#pollMs = pollMs;
    this.#log = log;
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /** Runs the pass now instead of at the next poll. */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Ends the loop after the pass under way, if any. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      this.#woken = false;
      try {
        await this.#pass();
      } catch (e) {
        this.#log.error(`${this.#name}: pass failed`, e);
      }
      if (this.#stopped || this.#woken) continue;
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
