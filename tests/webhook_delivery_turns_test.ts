/**
 * Webhook delivery takes the accounts with due events in turn, each pass starting after the
 * account the last one stopped at, over real HTTP (real server and KV file, loopback receivers).
 * Started from the first account in key order every time, a pass whose slots fill up before the
 * end of the list serves the same early accounts again and again, and an account whose id sorts
 * later waits behind their whole backlog.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { hourlyWatch, until } from "./webhook_receiver.ts";
import { createWatch, type Delivery, queueDelivery } from "../watches/store.ts";
import { MAX_WATCHES_PER_ACCOUNT } from "../schemas/watches.ts";

/**
 * A loopback receiver that notes `name` in `arrivals` as each POST arrives and answers 204 at
 * once, or, while `held`, when the test lets one go.
 */
function receiverOf(name: string, arrivals: string[], held: boolean) {
  const waiting: (() => void)[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    arrivals.push(name);
    await req.body?.cancel();
    if (held) await new Promise<void>((r) => waiting.push(r));
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hooks/${name}`,
    get waiting() {
      return waiting.length;
    },
    /** Answers the oldest POST held. */
    letOneGo() {
      waiting.shift()?.();
    },
    async [Symbol.asyncDispose]() {
      held = false;
      waiting.splice(0).forEach((r) => r());
      await server.shutdown();
    },
  };
}

Deno.test("webhook fairness: a pass starts after the account the last one stopped at, so a later account's event is not held behind an earlier account's backlog", async () => {
  await using s = await startServer({
    watches: {
      minSeconds: 1,
      allowPrivate: true,
      run: true,
      scheduler: { pollMs: 50 },
      // Three slots and none kept for idle accounts (a quarter of 3 rounds to 0); one account
      // may take all three. Never slow: held answers must not cut the first account's share.
      webhooks: { pollMs: 50, maxInFlight: 3, perAccount: 3, slowMs: 60_000 },
    },
  });
  const arrivals: string[] = [];
  await using early = receiverOf("early", arrivals, true);
  await using late = receiverOf("late", arrivals, false);
  const [first, second] = [await s.account("scale"), await s.account("scale")]
    .sort((a, b) => a.id < b.id ? -1 : 1);
  const now = Date.now();
  // Watches not due for an hour: only the events queued here are sent.
  const watchOf = (a: { id: string; keyId: string }, url: string, events: number) => ({
    ...hourlyWatch(a.id, a.keyId),
    next_at: now + 3_600_000,
    webhook_url: url,
    pending: Array.from({ length: events }, (_, i) => ({ id: `evt_${a.id}_${i}`, attempts: 0 })),
  });
  const wEarly = watchOf(first, early.url, 12);
  const wLate = watchOf(second, late.url, 1);
  for (const w of [wEarly, wLate]) {
    assert.ok(await createWatch(s.kv, w, MAX_WATCHES_PER_ACCOUNT));
  }
  // Every event due at once, in one commit: the first pass sees them all.
  const op = s.kv.atomic();
  for (const w of [wEarly, wLate]) {
    for (const p of w.pending) {
      const d: Delivery = {
        id: p.id,
        watch_id: w.id,
        account_id: w.account_id,
        body: JSON.stringify({ event_id: p.id }),
        created_at: now - 1_000,
        attempts: 0,
        next_at: now - 1_000,
      };
      queueDelivery(op, d);
    }
  }
  assert.ok((await op.commit()).ok);
  s.deps.watches.delivery.wake();
  await until(
    "the earlier account's events in every slot",
    () => Promise.resolve(early.waiting >= 3 || undefined),
  );
  await new Promise((r) => setTimeout(r, 300)); // a few passes with every slot taken
  assert.deepEqual(arrivals, ["early", "early", "early"]);
  // One slot frees: the pass after it starts after the earlier account, at the later one.
  early.letOneGo();
  await until("the freed slot taken", () => Promise.resolve(arrivals.length >= 4 || undefined));
  assert.equal(arrivals[3], "late", "the freed slot went to the later account's event");
});
