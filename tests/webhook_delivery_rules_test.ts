/**
 * Webhook delivery rules at their edges, over real HTTP to a real receiver on loopback, with the
 * fake marketplace serving the real product page for the watch's refreshes. Each test makes an
 * hourly watch, waits for its first refresh, and puts one event straight into its outbox:
 * every 2xx is a delivery and 300 is not; a delivery more than a day late is still a delivery,
 * signed with the time it is sent; a body with non-ASCII text arrives whole; a failed attempt's
 * log names the host, not the URL's token; a loopback literal is refused at delivery; an account
 * that is gone gets nothing; a deleted watch's waiting events go with it; the outbox as older
 * versions kept it is moved at once, not 100 a poll; and a `*.localhost` name is refused whatever
 * a resolver says.
 */
import assert from "node:assert/strict";
import { type Rig, startRig } from "./upstream_harness.ts";
import {
  createdWatch,
  FAST,
  postWatch,
  receiver,
  until,
  verify,
  watchList,
} from "./webhook_receiver.ts";
import type { WatchView } from "../schemas/watches.ts";
import { type Delivery, queueDelivery, updateWatch, type Watch } from "../watches/store.ts";
import { KV } from "../metering/kv_layout.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";
const DAY_MS = 86_400_000;

async function watchOf(rig: Rig, id: string): Promise<WatchView | undefined> {
  return (await watchList(rig.server.url, rig.key)).find((w) => w.id === id);
}

/** An hourly watch sending to `webhook`, once its first refresh (which sends nothing) is done. */
async function refreshedWatch(rig: Rig, webhook: string) {
  rig.fake.page(DP, PAGE);
  const w = await createdWatch(rig.server.url, rig.key, webhook, 3600);
  await until(
    "the first refresh",
    async () => ((await watchOf(rig, w.id))?.refreshes ? 1 : undefined),
  );
  return w;
}

/** Puts one event of the watch in the outbox, due now and pending on it, as a refresh does. */
async function queue(
  rig: Rig,
  watchId: string,
  event: Partial<Delivery> & { body: string },
): Promise<string> {
  const d: Delivery = {
    id: "evt_rules0000000001",
    watch_id: watchId,
    account_id: rig.accountId,
    created_at: Date.now(),
    attempts: 0,
    next_at: Date.now(),
    ...event,
  };
  const written = await updateWatch(
    rig.server.kv,
    watchId,
    (c) => ({ ...c, pending: [...(c.pending ?? []), { id: d.id, attempts: 0 }] }),
    (op) => queueDelivery(op, d),
  );
  assert.ok(written);
  return d.id;
}

/** The watch's first note, once there is one. */
function firstNote(rig: Rig, watchId: string) {
  return until("a delivery note", async () => (await watchOf(rig, watchId))?.deliveries.at(-1));
}

Deno.test("webhook delivery: any 2xx answer (202 Accepted) is a delivery, not retried", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver(() => 202);
  const w = await refreshedWatch(rig, hook.url);
  await queue(rig, w.id, { body: '{"event":"accepted"}' });
  const note = await firstNote(rig, w.id);
  assert.equal(note.result, "delivered (HTTP 202)");
  assert.equal(note.delivered, true);
  assert.equal(hook.got.length, 1);
});

Deno.test("webhook delivery: a 300 answer is a failed attempt, retried until a 2xx", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver((n) => (n === 1 ? 300 : 204));
  const w = await refreshedWatch(rig, hook.url);
  await queue(rig, w.id, { body: '{"event":"multiple choices"}' });
  const notes = await until("a delivered note", async () => {
    const v = await watchOf(rig, w.id);
    return v?.deliveries.some((d) => d.delivered) ? v.deliveries : undefined;
  });
  // Newest first.
  assert.deepEqual(notes.map((d) => [d.attempt, d.result, d.delivered]), [
    [2, "delivered (HTTP 204)", true],
    [1, "HTTP 300", false],
  ]);
  assert.equal(hook.got.length, 2);
});

Deno.test("webhook delivery: an event delivered more than a day after it arose is noted delivered, signed with the time of sending", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver(() => 204);
  const w = await refreshedWatch(rig, hook.url);
  const body = '{"event":"late"}';
  await queue(rig, w.id, { body, created_at: Date.now() - DAY_MS - 60_000, attempts: 7 });
  const note = await firstNote(rig, w.id);
  assert.equal(note.result, "delivered (HTTP 204)");
  assert.equal(note.delivered, true);
  assert.equal(hook.got.length, 1);
  // A receiver that follows the README refuses a signature older than 5 minutes.
  assert.ok(await verify(w.secret, hook.got[0].signature, hook.got[0].body), hook.got[0].signature);
});

Deno.test("webhook delivery: a body with non-ASCII text arrives whole, and its signature verifies", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver(() => 204);
  const w = await refreshedWatch(rig, hook.url);
  // A UK or German price display, as an event's `display` carries it.
  const body = JSON.stringify({ event_id: "evt_rules0000000001", display: "£12.99 – €10,50 ✓" });
  await queue(rig, w.id, { body });
  const note = await firstNote(rig, w.id);
  assert.equal(note.result, "delivered (HTTP 204)");
  assert.equal(hook.got.length, 1);
  assert.equal(hook.got[0].body, body);
  assert.ok(await verify(w.secret, hook.got[0].signature, hook.got[0].body));
});

Deno.test("webhook delivery: a failed attempt's log line names the webhook's host, never the token in its URL", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver(() => 500);
  const w = await refreshedWatch(rig, hook.url);
  assert.ok(hook.url.includes("token=abc"));
  const id = await queue(rig, w.id, { body: '{"event":"refused"}' });
  const line = await until(
    "the failed attempt's log line",
    () => Promise.resolve(rig.server.errors.find((e) => e.startsWith(`webhook ${id} `))),
  );
  assert.ok(line.includes(new URL(hook.url).host), line);
  assert.ok(!rig.server.errors.some((e) => e.includes("token=")), rig.server.errors.join("\n"));
});

Deno.test("webhook delivery: a watch whose stored target is a loopback address is refused at delivery when private hosts are not allowed", async () => {
  const dns: Record<string, string[]> = { "hooks.example.com": ["93.184.216.34"] };
  const watches = {
    ...FAST,
    allowPrivate: false,
    resolve: (host: string) => Promise.resolve(dns[host] ?? []),
  };
  await using rig = await startRig({ watches, plan: "scale" });
  await using hook = receiver(() => 204);
  const w = await refreshedWatch(rig, "https://hooks.example.com/shelf");
  // As stored by a server run with WEBHOOK_ALLOW_PRIVATE=1 over the same store: an IP literal,
  // which no lookup is made for.
  await updateWatch(rig.server.kv, w.id, (c) => ({ ...c, webhook_url: hook.url }));
  await queue(rig, w.id, { body: '{"event":"loopback"}' });
  const note = await firstNote(rig, w.id);
  assert.equal(note.result, "refused: the host resolves to a private address (127.0.0.1)");
  assert.equal(note.delivered, false);
  assert.equal(hook.got.length, 0);
});

Deno.test("webhook delivery: an account that is gone gets nothing sent; its event is dropped with a note", async () => {
  await using rig = await startRig({ watches: FAST, plan: "scale" });
  await using hook = receiver(() => 204);
  const w = await refreshedWatch(rig, hook.url);
  await rig.server.kv.delete(KV.account(rig.accountId));
  const id = await queue(rig, w.id, { body: '{"event":"orphan"}' });
  // The account's key no longer answers: the watch is read from the store.
  const note = await until("the drop note", async () => {
    const watch = (await rig.server.kv.get<Watch>(KV.watch(w.id))).value;
    return watch?.deliveries.find((d) => d.event_id === id);
  });
  assert.equal(note.result, "dropped: the account is inactive");
  assert.equal(note.delivered, false);
  assert.equal(hook.got.length, 0);
  assert.equal((await rig.server.kv.get(KV.webhook(id))).value, null);
});

Deno.test("webhook delivery: deleting a watch removes its events waiting for a retry at once, not at their retry", async () => {
  const watches = {
    ...FAST,
    webhooks: { ...FAST.webhooks, retryMs: 600_000, maxDelayMs: 600_000 },
  };
  await using rig = await startRig({ watches, plan: "scale" });
  await using hook = receiver(() => 500);
  const w = await refreshedWatch(rig, hook.url);
  const id = await queue(rig, w.id, { body: '{"event":"waiting"}' });
  const note = await firstNote(rig, w.id);
  assert.equal(note.result, "HTTP 500");
  assert.notEqual((await rig.server.kv.get(KV.webhook(id))).value, null, "due again in 10 minutes");
  const r = await fetch(`${rig.server.url}/v1/watches/${w.id}`, {
    method: "DELETE",
    headers: { "x-api-key": rig.key },
  });
  await r.body?.cancel();
  assert.equal(r.status, 200);
  assert.equal((await rig.server.kv.get(KV.webhook(id))).value, null);
});

Deno.test("webhook delivery: 250 entries of the outbox as older versions kept it are all moved on one wake, not 100 a poll", async () => {
  // Polls a minute apart: only passes that follow each other at once move them within the wait.
  const watches = { ...FAST, webhooks: { ...FAST.webhooks, pollMs: 60_000 } };
  await using rig = await startRig({ watches, plan: "scale" });
  const legacy = () => Array.fromAsync(rig.server.kv.list({ prefix: KV.webhookSchedule }));
  // Entries of events that are gone: each is dropped as it is read.
  const at = Date.now();
  for (let i = 0; i < 250; i += 50) {
    const op = rig.server.kv.atomic();
    for (let j = i; j < i + 50; j++) {
      const id = `evt_legacy${String(j).padStart(9, "0")}`;
      op.set([...KV.webhookSchedule, at + j, id], id);
    }
    assert.ok((await op.commit()).ok);
  }
  assert.equal((await legacy()).length, 250);
  rig.server.deps.watches!.delivery.wake();
  await until(
    "the old outbox emptied",
    async () => ((await legacy()).length === 0 ? true : undefined),
    15_000,
  );
});

Deno.test("webhook targets: a *.localhost name is refused as loopback, whatever a resolver answers for it", async () => {
  // A resolver that answers a public address for every name, as one that follows no RFC 6761.
  const watches = {
    ...FAST,
    run: false,
    allowPrivate: false,
    resolve: () => Promise.resolve(["93.184.216.34"]),
  };
  await using rig = await startRig({ watches, plan: "scale" });
  for (const url of ["http://api.localhost/hook", "https://a.b.LOCALHOST:8443/hook"]) {
    const r = await postWatch(rig.server.url, rig.key, url, 3600);
    assert.equal(r.status, 422, url);
    const detail = (await r.json()).detail[0];
    assert.deepEqual(detail.loc, ["body", "webhook_url"], url);
    assert.match(JSON.stringify(detail), /a loopback host/, url);
  }
  const allowed = await postWatch(rig.server.url, rig.key, "https://hooks.example.com/h", 3600);
  assert.equal(allowed.status, 201, "the resolver's answer is taken for other names");
});
