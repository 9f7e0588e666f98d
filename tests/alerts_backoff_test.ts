/**
 * Alert retries back off exponentially (README: "retries failures after 30 s doubling to at most
 * 1 h"): with the first retry after 100 ms, each failed attempt waits twice as long as the one
 * before. Only lower bounds are asserted: a loaded machine may run an attempt late, never early. The mail server is a loopback port that refuses connections; the alert
 * is raised by real calls crossing 100% of a plan. Real server, real KV file.
 */
import assert from "node:assert/strict";
import { burst, count, startServer } from "./test_server.ts";
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";
import { listAlerts } from "../metering/alerts.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

function refusedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("alerts: failed deliveries wait 100, 200, 400, 800 ms, doubling each time", async () => {
  const plans = new Plans([...BUILTIN_PLANS, {
    id: "tiny",
    credits: 2,
    rate_limit_per_sec: 1000,
    max_keys: 1,
    groups: ["products"],
  }]);
  await using s = await startServer({
    plans,
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
