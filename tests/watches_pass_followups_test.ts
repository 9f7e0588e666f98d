/**
 * What a pass of the watch loops does about the work it leaves behind, over a real server and KV
 * file: a refresh pass that could not see every due watch (one pass reads at most 1,000 due
 * entries) runs the next pass at once rather than at the next poll; and a webhook pass leaves the
 * due events of an account whose first event is still to come unread.
 */
import assert from "node:assert/strict";
import { ControlledSource, startServer } from "./test_server.ts";
import { hourlyWatch, receiver, until } from "./webhook_receiver.ts";
import { detailsAt } from "./watch_details.ts";
import type { DataRequest } from "../upstream/data_source.ts";
import { KV } from "../metering/kv_layout.ts";
import { createWatch, type Delivery, queueDelivery, type Watch } from "../watches/store.ts";
import { WebhookDelivery } from "../watches/webhook_delivery.ts";
import { MAX_WATCHES_PER_ACCOUNT } from "../schemas/watches.ts";
import { withLists } from "./counted_kv.ts";

const stored = async (kv: Deno.Kv, id: string) => (await kv.get<Watch>(KV.watch(id))).value!;

/** Details answers at once, except those of accounts in `hang`, which wait until released. */
class HangingAccounts extends ControlledSource {
  readonly hang = new Set<string>();
  readonly #waiting: (() => void)[] = [];

  get hanging(): number {
    return this.#waiting.length;
  }

  releaseAll(): void {
    this.hang.clear();
    this.#waiting.splice(0).forEach((r) => r());
  }

  override async fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name !== "details") return super.fetch(req);
    this.calls++;
    if (this.hang.has(req.owner ?? "")) {
      await new Promise<void>((r) => this.#waiting.push(r));
      throw new Error("released");
    }
    return detailsAt(req.params.asin, 10);
  }
}

// The scheduler's own poll is ten times the bound: only a pass run at once meets it.
const LONG_POLL_MS = 60_000;
const WITHIN_MS = 6_000;

Deno.test("refresh pass: a due watch beyond the 1,000 entries one pass reads is refreshed by a pass run at once, not at the next poll", async () => {
  const source = new HangingAccounts();
  // One refresh of an account at a time; ten accounts' refreshes leave slots free.
  await using s = await startServer({
    source,
    watches: {
      minSeconds: 1,
      allowPrivate: true,
      run: true,
      scheduler: { pollMs: LONG_POLL_MS, maxInFlight: 20, perAccount: 1 },
    },
  });
  try {
    // Ten accounts with a full set of watches each, all due, whose refreshes hang upstream: they
    // fill the first pass's 1,000 entries, and none ends to wake the loop.
    const base = Date.now() - 60_000;
    const full = await Promise.all(Array.from({ length: 10 }, () => s.account("scale")));
    await Promise.all(full.map(async (a, j) => {
      source.hang.add(a.id);
      for (let k = 0; k < MAX_WATCHES_PER_ACCOUNT; k++) {
        const w = { ...hourlyWatch(a.id, a.keyId), next_at: base + k * 10 + j };
        assert.ok(await createWatch(s.kv, w, MAX_WATCHES_PER_ACCOUNT));
      }
    }));
    // Due after all of them, so outside the first pass's read.
    const b = await s.account("scale");
    const wb = { ...hourlyWatch(b.id, b.keyId), next_at: base + 30_000 };
    assert.ok(await createWatch(s.kv, wb, MAX_WATCHES_PER_ACCOUNT));
    // Written straight to the store, the watches woke nothing: the loop waits for its poll.
    s.deps.watches.scheduler.wake();
    const seen = await until(
      "the refresh of the watch due 1,001st",
      async () => (await stored(s.kv, wb.id)).refreshes >= 1 || undefined,
      WITHIN_MS,
    );
    assert.equal(seen, true);
    // Still under way meanwhile, one of each full account: none of them woke the loop.
    await until(
      "ten refreshes under way",
      () => Promise.resolve(source.hanging === 10 || undefined),
    );
  } finally {
    // Before the server stops, which waits for the refreshes under way.
    source.releaseAll();
  }
});

/** `kv` with each list noted by its selector's prefix (JSON). */
function countedLists(kv: Deno.Kv) {
  const lists: string[] = [];
  const counted = withLists(kv, (selector) => {
    lists.push(JSON.stringify("prefix" in selector ? selector.prefix : null));
  });
  return { kv: counted, lists };
}

Deno.test("webhook pass: an account whose first event is not yet due has none of its outbox read, pass after pass", async () => {
  await using s = await startServer();
  await using hook = receiver();
  const later = await s.account("scale");
  const now = await s.account("scale");
  const t = Date.now();
  // Watches not due for an hour: only the events queued here are in the outbox.
  const wLater = { ...hourlyWatch(later.id, later.keyId), next_at: t + 3_600_000 };
  const wNow = { ...hourlyWatch(now.id, now.keyId), next_at: t + 3_600_000 };
  wLater.webhook_url = wNow.webhook_url = hook.url;
  const event = (w: Watch, id: string, at: number): Delivery => ({
    id,
    watch_id: w.id,
    account_id: w.account_id,
    body: JSON.stringify({ event_id: id, watch_id: w.id }),
    created_at: t,
    attempts: 0,
    next_at: at,
  });
  const dLater = event(wLater, `evt_later_${later.id}`, t + 3_600_000);
  const dNow = event(wNow, `evt_now_${now.id}`, t);
  for (const [w, d] of [[wLater, dLater], [wNow, dNow]] as const) {
    w.pending = [{ id: d.id, attempts: 0 }];
    assert.ok(await createWatch(s.kv, w, MAX_WATCHES_PER_ACCOUNT));
  }
  const op = s.kv.atomic();
  queueDelivery(op, dLater);
  queueDelivery(op, dNow);
  assert.ok((await op.commit()).ok);

  // The server's own loops do not run (no `run`): this one, over the counted store, is the only one.
  const { kv, lists } = countedLists(s.kv);
  const errors: string[] = [];
  const delivery = new WebhookDelivery(kv, { error: (m) => void errors.push(m) }, {
    allowPrivate: true,
    timing: { pollMs: 20, retryMs: 50, maxDelayMs: 100 },
  });
  delivery.start();
  try {
    await until("the due event at the receiver", () => Promise.resolve(hook.got[0]));
    // Passes after the delivery: each lists the accounts in the outbox, the later one among them.
    const visits = JSON.stringify(KV.webhookAccountSchedule);
    const from = lists.filter((p) => p === visits).length;
    await until(
      "twenty more reads of the accounts in the outbox",
      () => Promise.resolve(lists.filter((p) => p === visits).length >= from + 20 || undefined),
    );
  } finally {
    await delivery.stop();
  }
  const dueOf = (a: string) => lists.filter((p) => p === JSON.stringify(KV.webhookDueOfAccount(a)));
  assert.ok(dueOf(now.id).length >= 1, "the account with a due event had its outbox read");
  assert.equal(dueOf(later.id).length, 0, "the account with nothing due had its outbox read");
  assert.equal(hook.got.length, 1);
  assert.equal(JSON.parse(hook.got[0].body).event_id, dNow.id);
  assert.equal((await s.kv.get<Delivery>(KV.webhook(dLater.id))).value?.attempts, 0);
  assert.deepEqual(errors, []);
});
