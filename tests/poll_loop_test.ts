/**
 * core/poll_loop.ts with a long poll (10 s): stop() wakes a loop that is sleeping, so a drain
 * does not wait out the poll (Deno Deploy kills 5 s after SIGINT); and a wake() that arrives
 * while a pass is under way is not lost: the next pass runs at once, not at the next poll (a
 * webhook event would otherwise wait the whole poll). Margins are wide: 3 s against 10 s.
 */
import assert from "node:assert/strict";
import { PollLoop } from "../core/poll_loop.ts";
import type { Log } from "../core/log.ts";

const LONG_POLL_MS = 10_000;
const WITHIN_MS = 3_000;

const log: Log = { error: () => {} };

/** A loop whose passes are counted; `gate`, when set, holds the pass under way until opened. */
class CountingLoop extends PollLoop {
  passes = 0;
  gate: Promise<void> | null = null;
  #seen: (() => void)[] = [];

  constructor() {
    super("test loop", LONG_POLL_MS, log);
  }

  protected override async pass(): Promise<boolean> {
    this.passes++;
    this.#seen.splice(0).forEach((r) => r());
    if (this.gate) await this.gate;
    return false;
  }

  /** Resolves once `n` passes have started, or with false after `ms`. */
  async passesReach(n: number, ms: number): Promise<boolean> {
    const stop = Date.now() + ms;
    while (this.passes < n) {
      const left = stop - Date.now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((r) => this.#seen.push(r)),
        new Promise<void>((r) => (timer = setTimeout(r, left))),
      ]);
      clearTimeout(timer);
    }
    return true;
  }
}

/** Whether `p` settles within `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const r = await Promise.race([
    p.then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
  ]);
  clearTimeout(timer);
  return r;
}

Deno.test("poll loop: stop() wakes a sleeping loop instead of waiting out the poll", async () => {
  const loop = new CountingLoop();
  loop.start();
  assert.ok(await loop.passesReach(1, WITHIN_MS), "the first pass runs at start");
  await new Promise((r) => setTimeout(r, 50)); // the loop is asleep now, for 10 s
  const stopped = loop.stop();
  const quick = await within(stopped, WITHIN_MS);
  if (!quick) {
    loop.wake(); // ends the sleep, so that the failure below leaves no timer
    await stopped;
  }
  assert.ok(quick, `stop() returned within ${WITHIN_MS} ms of a ${LONG_POLL_MS} ms poll`);
  assert.equal(loop.passes, 1, "no pass after the stop");
});

Deno.test("poll loop: a wake() during a pass runs another pass at once", async () => {
  const loop = new CountingLoop();
  let open!: () => void;
  loop.gate = new Promise<void>((r) => (open = r));
  loop.start();
  try {
    assert.ok(await loop.passesReach(1, WITHIN_MS), "the first pass runs at start");
    // The first pass is under way (held at the gate): new work arrives and wakes the loop.
    loop.wake();
    loop.gate = null;
    open();
    assert.ok(
      await loop.passesReach(2, WITHIN_MS),
      `a second pass within ${WITHIN_MS} ms, not at the next ${LONG_POLL_MS} ms poll`,
    );
  } finally {
    await loop.stop();
  }
});
