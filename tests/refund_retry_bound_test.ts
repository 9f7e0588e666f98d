/**
 * A refund the store will not take is tried again in the background after 1 s, the wait doubling
 * up to 5 minutes, and given up (one log line) at the first try after which the next wait would
 * end past REFUND_RETRY_MS (an hour) from the first failure: not one wait later, five minutes past
 * the hour. setTimeout runs on a clock moved by hand and Date.now reads the same time, so the hour
 * passes at once; real KV file, wrapped only to refuse its commits.
 */
import assert from "node:assert/strict";
import { Accounts } from "../metering/accounts.ts";
import { Meter } from "../metering/meter.ts";
import { builtinPlans } from "../metering/plans.ts";
import { ManualClock } from "../metering/clock.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { withCommits } from "./counted_kv.ts";
import { handClock, realSetTimeout } from "./hand_clock.ts";

const HOUR = 60 * 60_000; // REFUND_RETRY_MS
/** The store's lock back-offs (core/lock_backoff.ts) wait at most this; a refund's retry, 1 s on. */
const LONGEST_LOCK_WAIT = 250;

const realWait = (ms: number) => new Promise<void>((r) => realSetTimeout(r, ms));

Deno.test("a refund the store keeps refusing is given up at the first retry whose next wait would end past the hour", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const real = await Deno.openKv(path);
  const realNow = Date.now;
  try {
    let refusing = false;
    const kv = withCommits(real, (commit) => {
      if (refusing) return Promise.reject(new Error("database is locked"));
      return commit();
    });
    const plans = builtinPlans();
    const clock = new ManualClock();
    const accounts = new Accounts(kv, plans, clock);
    const meter = new Meter(kv, plans, clock);
    const a = await accounts.create("retry-bound@example.com", "starter");
    const { key } = await accounts.createKey(a.id);
    await meter.call(a.id, key.id, { group: "products", cost: 1, valid: true });
    const period = (await accounts.get(a.id)).period_start;

    let wall = realNow();
    Date.now = () => wall;
    const lines: { at: number; message: string }[] = [];
    const log = (message: string) => void lines.push({ at: wall, message });
    const givenUp = () => lines.some((l) => l.message.includes("given up: not applied"));
    /** The refund's retries: each one's wait, and the time it was set (after the try before failed). */
    const retries: { ms: number; at: number }[] = [];
    {
      using hand = handClock();
      const handSetTimeout = globalThis.setTimeout;
      let last = 0;
      globalThis.setTimeout = ((fn: () => void, ms = 0) => {
        last = ms;
        if (ms > LONGEST_LOCK_WAIT) retries.push({ ms, at: wall });
        return handSetTimeout(fn, ms);
      }) as typeof setTimeout;
      /** Passes each wait the refund sets at once, the wall clock moved by as much, until `done`. */
      const drive = async (done: () => boolean) => {
        for (let steps = 0; !done(); steps++) {
          assert.ok(steps < 5_000, "done within the hour's retries");
          for (let i = 0; hand.pending === 0 && !done(); i++) {
            assert.ok(i < 10_000, "the refund waits on a timer or is done");
            await realWait(1);
          }
          if (done()) return;
          wall += last;
          hand.advance(last);
        }
      };
      refusing = true;
      const first = meter.refundSurely(a.id, period, 1, undefined, log);
      await drive(() => retries.length > 0);
      assert.equal(await first, null, "put off");
      assert.ok(lines.some((l) => l.message.includes("it is tried again")));
      await drive(givenUp);
      assert.equal(hand.pending, 0, "nothing tried after it is given up");
    }
    const started = retries[0].at;
    const end = lines.find((l) => l.message.includes("given up: not applied"))!.at;
    assert.match(
      lines.at(-1)!.message,
      new RegExp(`^refund of 1 credit\\(s\\) to ${a.id} .* given up: not applied$`),
    );
    // Waits of 1 s doubling, then capped at 5 minutes.
    assert.deepEqual(
      retries.slice(0, 11).map((r) => r.ms),
      [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map((s) => s * 1000),
    );
    assert.ok(retries.slice(10).every((r) => r.ms === 300_000));
    // At each retry's end, the time since the first failure plus that retry's wait: past the hour
    // at the last one only, which is given up before the hour is out.
    const checks = retries.map((r, i) => (retries[i + 1]?.at ?? end) - started + r.ms);
    assert.ok(checks.at(-1)! > HOUR, `given up at ${checks.at(-1)} ms`);
    assert.ok(end - started <= HOUR, `given up ${end - started} ms after the first failure`);
    const early = checks.slice(0, -1).filter((c) => c > HOUR);
    assert.deepEqual(early, [], "a retry whose next wait ended past the hour was not the last");
    assert.equal((await accounts.get(a.id)).used, 1, "the refund never landed");
  } finally {
    Date.now = realNow;
    real.close();
    await removeKvFiles(path);
  }
});
