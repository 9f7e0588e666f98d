/**
 * Alert retries back off exponentially (README: "retries failures after 30 s doubling to at most
 * 1 h"): with the first retry after 100 ms, each failed attempt waits twice as long as the one
 * before. Only lower bounds are asserted: a loaded machine may run an attempt late, never early. The mail server is a loopback port that refuses connections; the alert
 * is raised by real calls crossing 100% of a plan. Real server, real KV file.
 */
import assert from "node:assert/strict";
import { burst, count, startServer } from "./test_server.ts";
import { withTinyPlan } from "./tiny_plan.ts";
import { listAlerts } from "../metering/alerts.ts";
import { KV } from "../metering/kv_layout.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

function refusedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A plan of two credits: the second call crosses both alert thresholds. */
const TINY = withTinyPlan(1000);

Deno.test("alerts: failed deliveries wait 100, 200, 400, 800 ms, doubling each time", async () => {
  await using s = await startServer({
    plans: TINY,
    smtp: {
      url: `smtp://127.0.0.1:${refusedPort()}`,
      timing: { pollMs: 20, retryMs: 100, maxDelayMs: 1_000, leaseMs: 5_000 },
      timeoutMs: 500,
    },
  });
  const { id, key } = await s.account("tiny");
  await s.accounts.updateAlerts(id, { at80: false });
  assert.equal(count(await burst(2, () => s.get(OFFERS, key)), 200), 2);
  // Each failed attempt records when the next may be made; the gaps between them double.
  const seen = new Map<number, number>();
  const deadline = Date.now() + 8_000;
  while (Date.now() < deadline && !seen.has(5)) {
    const [alert] = await listAlerts(s.kv, id);
    if (alert && alert.attempts > 0 && !seen.has(alert.attempts)) {
      seen.set(alert.attempts, alert.next_attempt_at);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.ok(seen.has(5), `five failed attempts within 8 s: ${[...seen.keys()]}`);
  const gap = (k: number) => seen.get(k + 1)! - seen.get(k)!;
  // next(k+1) = time of attempt k+1 (≥ next(k)) + 100·2^k ms; so each gap is at least that delay.
  assert.ok(gap(1) >= 200, `after the 2nd failure: ${gap(1)} ms`);
  assert.ok(gap(2) >= 400, `after the 3rd failure: ${gap(2)} ms`);
  assert.ok(gap(3) >= 800, `after the 4th failure: ${gap(3)} ms`);
  assert.ok(gap(4) >= 1_000, `after the 5th: at least the 1 s cap, ${gap(4)} ms`);
});

Deno.test("alerts: with the default timing a failed delivery waits 30 s, doubling, and never more than an hour", async () => {
  // Only the poll is shortened: retries start at 30 s and are held to the hour (README).
  await using s = await startServer({
    plans: TINY,
    smtp: { url: `smtp://127.0.0.1:${refusedPort()}`, timing: { pollMs: 20 }, timeoutMs: 500 },
  });
  const { id, key } = await s.account("tiny");
  await s.accounts.updateAlerts(id, { at80: false });
  /**
   * The alert once it has failed `attempts` times, with the wait its last failure set: each
   * attempt happens between `from` and the moment it is seen, so the wait lies within those.
   */
  const failedTo = async (attempts: number, from: number) => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const [alert] = await listAlerts(s.kv, id);
      const seen = Date.now();
      if (alert?.attempts === attempts) {
        return { alert, wait: [alert.next_attempt_at - seen, alert.next_attempt_at - from] };
      }
      assert.ok(seen < deadline, `no failed attempt ${attempts} within 5 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const inRange = (wait: number[], ms: number, what: string) =>
    assert.ok(wait[0] <= ms && ms <= wait[1], `${what}: a wait of ${wait.join("–")} ms, not ${ms}`);

  const raised = Date.now();
  assert.equal(count(await burst(2, () => s.get(OFFERS, key)), 200), 2);
  let { alert, wait } = await failedTo(1, raised);
  inRange(wait, 30_000, "after the first failure");
  // Hours of failures cannot be waited out here: the alert is made due again as if it had failed
  // `k` times already, and its next failure must wait 30 s · 2^k, at most an hour.
  for (const k of [5, 6, 7, 8, 12]) {
    const from = Date.now();
    await s.kv.set(KV.alert(id, alert.id), { ...alert, attempts: k, next_attempt_at: 0 });
    ({ alert, wait } = await failedTo(k + 1, from));
    inRange(wait, Math.min(3_600_000, 30_000 * 2 ** k), `after failure ${k + 1}`);
  }
  assert.equal(alert.status, "pending");
});
