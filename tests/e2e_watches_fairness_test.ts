/**
 * Watches that one account cannot turn against the others or the operator, over real HTTP (real
 * server and KV file, loopback receivers): an account whose receiver hangs, or whose refreshes
 * hang upstream, holds only its own few slots while another account's events and refreshes go
 * on; one watch never has more than 20 undelivered events (the oldest are dropped and noted); and
 * an account set inactive gets no POST and no refresh until it is active again.
 *
 * The product source here is a stand-in whose price the test sets (and, per account, can hang):
 * what is under test is what the loops do with the results, not the page parser.
 */
import assert from "node:assert/strict";
import { ControlledSource, startServer, type TestServer } from "./test_server.ts";
import { createdWatch, receiver, until, watchList } from "./webhook_receiver.ts";
import type { DataRequest } from "../upstream/data_source.ts";
import { KV } from "../metering/kv_layout.ts";
import { heldCredits } from "../metering/credits_in_flight.ts";
import { type Delivery, queueDelivery, type Watch } from "../watches/store.ts";
import { detailsAt } from "./watch_details.ts";
import { InFlight } from "../watches/in_flight.ts";

/** MAX_PENDING_EVENTS in watches/store.ts: undelivered events one watch may have. */
const BOUND = 20;
const ADMIN = `admin-${crypto.randomUUID()}`;

/** Details pages at the price the test sets; an account in `hang` waits until released. */
class PriceSource extends ControlledSource {
  price = 10;
  /** Each details fetch moves the price on (so every refresh after the first is a change). */
  moving = false;
  /** While above 0, each details fetch moves the price on by one and counts this down. */
  moves = 0;
  readonly hang = new Set<string>();
  hanging = 0;
  /** The account of each details fetch, in order. */
  readonly owners: string[] = [];
  #released = false;
  /** Per account, the hanging fetches' releases, oldest first. */
  readonly #waiting = new Map<string, (() => void)[]>();

  release(): void {
    this.#released = true;
    for (const queue of this.#waiting.values()) queue.splice(0).forEach((r) => r());
  }

  /** Ends one of `owner`'s hanging fetches. */
  releaseOne(owner: string): void {
    this.#waiting.get(owner)?.shift()?.();
  }

  hangingOf(owner: string): number {
    return this.#waiting.get(owner)?.length ?? 0;
  }

  override async fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name !== "details") return super.fetch(req);
    this.calls++;
    this.owners.push(req.owner ?? "");
    if (req.owner && this.hang.has(req.owner)) {
      this.hanging++;
      if (!this.#released) {
        const queue = this.#waiting.get(req.owner) ?? [];
        this.#waiting.set(req.owner, queue);
        await new Promise<void>((r) => queue.push(r));
      }
      this.hanging--;
      throw new Error("released");
    }
    if (this.moves > 0) {
      this.moves--;
      this.price++;
    }
    const amount = this.moving ? this.price++ : this.price;
    return detailsAt(req.params.asin, amount);
  }
}

const create = (s: TestServer, key: string, webhook: string, every = 1) =>
  createdWatch(s.url, key, webhook, every);

const watchesOf = (s: TestServer, key: string) => watchList(s.url, key);

/** Every watch of the account has had its first refresh. */
function refreshed(s: TestServer, key: string, n = 1) {
  return until(`refresh ${n} of every watch`, async () => {
    const ws = await watchesOf(s, key);
    return ws.every((w) => w.refreshes >= n) ? ws : undefined;
  });
}

async function watchRecord(s: TestServer, id: string): Promise<Watch> {
  return (await s.kv.get<Watch>(KV.watch(id))).value!;
}

/** The events of watch `id` still waiting in the outbox. */
async function undelivered(s: TestServer, id: string): Promise<number> {
  let n = 0;
  for await (const e of s.kv.list<Delivery>({ prefix: ["webhook"] })) {
    if (e.value.watch_id === id) n++;
  }
  return n;
}

function setStatus(s: TestServer, accountId: string, status: "active" | "inactive") {
  return fetch(`${s.url}/admin/accounts/${accountId}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ status }),
  }).then(async (r) => {
    assert.equal(r.status, 200, await r.text());
  });
}

/** A listener that accepts connections, reads them and never answers. */
function hangingReceiver() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of listener) conns.push(c);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/victim`,
    conns,
    async close() {
      try {
        listener.close();
      } catch { /* closed already */ }
      conns.forEach((c) => {
        try {
          c.close();
        } catch { /* closed by the other side */ }
      });
      await accepting;
    },
  };
}

type WatchOptions = NonNullable<NonNullable<Parameters<typeof startServer>[0]>["watches"]>;

/** A server whose watch loops run at test speed, webhooks to loopback allowed. */
function watchServer(
  source: PriceSource,
  scheduler: WatchOptions["scheduler"],
  webhooks: WatchOptions["webhooks"],
) {
  return startServer({
    source,
    watches: { minSeconds: 1, allowPrivate: true, run: true, scheduler, webhooks },
  });
}

/**
 * An account turns slow (one webhook slot) only after this: the tests of slot shares count each
 * account's two attempts, and on a loaded machine the second, started 2.5 s (the default) after
 * the first, was never started (a full run once timed out waiting for them).
 */
const NEVER_SLOW = 60_000;

/** A server whose refreshes run at test speed, `maxInFlight` at once and 2 of one account. */
/** `count` accounts with `watches` watches each, whose refreshes all hang upstream. */
async function hangingAccounts(
  s: TestServer,
  source: PriceSource,
  webhook: string,
  count: number,
  watches: number,
) {
  const hanging = [];
  for (let i = 0; i < count; i++) {
    const a = await s.account("scale");
    source.hang.add(a.id);
    for (let j = 0; j < watches; j++) await create(s, a.key, webhook);
    hanging.push(a);
  }
  return hanging;
}

function refreshServer(source: PriceSource, maxInFlight: number) {
  return watchServer(source, { pollMs: 50, maxInFlight, perAccount: 2 }, { pollMs: 50 });
}

Deno.test("webhook fairness: another account's event is delivered while one account's receiver hangs", async () => {
  const source = new PriceSource();
  await using s = await watchServer(source, { pollMs: 50 }, {
    pollMs: 50,
    retryMs: 50,
    maxDelayMs: 100,
    // Attempts hang far longer than the test: none of A's ends while B's event is sent.
    timeoutMs: 30_000,
    maxInFlight: 6,
    perAccount: 2,
    slowMs: NEVER_SLOW,
  });
  await using hookB = receiver();
  // Closed before the server stops: A's attempts end then rather than at their timeout.
  const hang = hangingReceiver();
  try {
    const a = await s.account("scale");
    const b = await s.account("scale");
    // More of A's events than the whole delivery may have under way.
    for (let i = 0; i < 8; i++) await create(s, a.key, hang.url);
    await refreshed(s, a.key);
    source.price = 11;
    await until("A's hanging attempts", () => Promise.resolve(hang.conns.length >= 2 || undefined));

    const wb = await create(s, b.key, hookB.url);
    await refreshed(s, b.key);
    source.price = 12;
    const got = await until("B's event", () => Promise.resolve(hookB.got[0]));
    assert.equal(JSON.parse(got.body).watch_id, wb.id);
    const aWatches = await watchesOf(s, a.key);
    assert.equal(
      aWatches.flatMap((w) => w.deliveries).length,
      0,
      "one of A's attempts ended: B's event was not sent while they hung",
    );
    assert.ok(hang.conns.length <= 2, `A had ${hang.conns.length} attempts under way at once`);
  } finally {
    await hang.close();
  }
});

Deno.test("refresh fairness: another account's watch is refreshed while one account's refreshes hang", async () => {
  const source = new PriceSource();
  await using s = await refreshServer(source, 4);
  await using hook = receiver();
  try {
    const a = await s.account("scale");
    const b = await s.account("scale");
    source.hang.add(a.id);
    // More of A's watches than the scheduler may refresh at once; all hang upstream.
    for (let i = 0; i < 6; i++) await create(s, a.key, hook.url);
    await until("A's hanging refreshes", () => Promise.resolve(source.hanging >= 1 || undefined));
    const wb = await create(s, b.key, hook.url);
    // Refreshed every second: three refreshes while every one of A's is still hanging.
    const seen = await until("B's third refresh", async () => {
      const w = (await watchesOf(s, b.key)).find((w) => w.id === wb.id)!;
      return w.refreshes >= 3 ? w : undefined;
    });
    assert.equal(seen.refreshes >= 3, true);
    assert.ok(source.hanging >= 1, "A's refreshes ended");
    assert.ok(source.hanging <= 2, `${source.hanging} of A's refreshes were under way at once`);
    assert.ok((await watchesOf(s, a.key)).every((w) => w.refreshes === 0));
  } finally {
    // Before the server stops, which waits for the refreshes under way.
    source.release();
  }
});

/**
 * Webhook delivery at test speed with 8 slots, 2 an account: the last 2 are kept for accounts
 * with nothing under way, one each. Attempts outlast the tests.
 */
const EIGHT_SLOTS = {
  pollMs: 50,
  retryMs: 50,
  maxDelayMs: 100,
  timeoutMs: 30_000,
  maxInFlight: 8,
  perAccount: 2,
  slowMs: NEVER_SLOW,
};

Deno.test("webhook fairness: accounts whose receivers hang cannot take the slots kept for accounts with nothing under way", async () => {
  const source = new PriceSource();
  await using s = await watchServer(source, { pollMs: 50 }, EIGHT_SLOTS);
  await using hookB = receiver();
  const hang = hangingReceiver();
  try {
    // Four accounts, each with more events than its share, would hold all 8 slots (probe BF).
    const attackers = [];
    for (let i = 0; i < 4; i++) attackers.push(await s.account("scale"));
    for (const a of attackers) {
      for (let i = 0; i < 3; i++) await create(s, a.key, hang.url);
      await refreshed(s, a.key);
    }
    source.price = 11;
    // Three accounts take the 6 open slots, the fourth one kept slot. Twelve watches refresh
    // first: on a loaded machine that took CI more than the default 8 s once.
    await until(
      "the hanging attempts",
      () => Promise.resolve(hang.conns.length >= 7 || undefined),
      20_000,
    );
    const b = await s.account("scale");
    const wb = await create(s, b.key, hookB.url);
    await refreshed(s, b.key);
    source.price = 12;
    const got = await until("B's event", () => Promise.resolve(hookB.got[0]));
    assert.equal(JSON.parse(got.body).watch_id, wb.id);
    assert.equal(hang.conns.length, 7, "attempts to the hanging receiver under way at once");
  } finally {
    await hang.close();
  }
});

/**
 * A receiver that answers 500 after 300 ms until `hang()`, then accepts and never answers (with
 * `quickFirst`, answering the first request to each path 200 at once); the requests it holds are
 * counted.
 */
function failingThenHanging(quickFirst = false) {
  let hanging = false;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let open = 0;
  const answered = new Set<string>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    await req.body?.cancel();
    const path = new URL(req.url).pathname;
    if (hanging && quickFirst && !answered.has(path)) {
      answered.add(path);
      return new Response(null, { status: 200 });
    }
    open++;
    try {
      if (hanging) await released;
      else await new Promise((r) => setTimeout(r, 300));
      return new Response(null, { status: 500 });
    } finally {
      open--;
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/victim`,
    get open() {
      return open;
    },
    hang() {
      hanging = true;
    },
    async close() {
      release();
      await server.shutdown();
    },
  };
}

for (const quickFirst of [false, true]) {
  Deno.test(`webhook fairness: accounts whose receivers fail slowly get one slot each, and none of the kept ones${quickFirst ? ", even after one quick delivery" : ""}`, async () => {
    const source = new PriceSource();
    source.moving = true; // every refresh is a change: the attackers' events keep coming
    // A failed attempt of 200 ms or more marks its account slow.
    await using s = await watchServer(source, { pollMs: 50 }, { ...EIGHT_SLOTS, slowMs: 200 });
    await using hookB = receiver();
    const target = failingThenHanging(quickFirst);
    try {
      // Eight accounts would take every slot, the two kept ones included (probe BJ).
      const attackers: { key: string }[] = [];
      for (let i = 0; i < 8; i++) attackers.push(await s.account("scale"));
      // A path each: with quickFirst, each attacker's receiver answers one event at once (probe BN:
      // that delivery gave its account all its slots back).
      for (const [i, a] of attackers.entries()) await create(s, a.key, `${target.url}/${i}`);
      // Each attacker's receiver has failed slowly at least once: all are slow.
      await until("a slow failure of every attacker", async () => {
        for (const a of attackers) {
          const ws = await watchesOf(s, a.key);
          if (!ws.some((w) => w.deliveries.some((d) => d.result === "HTTP 500"))) return undefined;
        }
        return true;
      });
      target.hang();
      await until(
        "the attackers' hanging attempts",
        () => Promise.resolve(target.open >= 6 || undefined),
      );
      const b = await s.account("scale");
      const wb = await create(s, b.key, hookB.url);
      await refreshed(s, b.key, 2); // its second refresh is a change: an event
      const got = await until("B's event", () => Promise.resolve(hookB.got[0]));
      assert.equal(JSON.parse(got.body).watch_id, wb.id);
      assert.equal(
        target.open,
        6,
        "one attempt of each of six slow accounts; none of the kept slots",
      );
    } finally {
      await target.close();
    }
  });
}

Deno.test("refresh fairness: accounts whose refreshes hang cannot take the slots kept for accounts with nothing under way", async () => {
  const source = new PriceSource();
  await using s = await refreshServer(source, 8);
  await using hook = receiver();
  try {
    await hangingAccounts(s, source, hook.url, 4, 3);
    await until("the hanging refreshes", () => Promise.resolve(source.hanging >= 7 || undefined));
    const b = await s.account("scale");
    const wb = await create(s, b.key, hook.url);
    const seen = await until("B's second refresh", async () => {
      const w = (await watchesOf(s, b.key)).find((w) => w.id === wb.id)!;
      return w.refreshes >= 2 ? w : undefined;
    });
    assert.ok(seen.refreshes >= 2);
    assert.equal(source.hanging, 7, "refreshes of the four accounts under way at once");
  } finally {
    source.release();
  }
});

Deno.test("refresh fairness: a freed slot goes to the account with fewer refreshes under way, not to the watch due first", async () => {
  const source = new PriceSource();
  await using s = await refreshServer(source, 8);
  await using hook = receiver();
  try {
    // Five accounts with four watches each hold all 8 slots (three 2 each, two one kept slot
    // each); their other watches are due before B's.
    const attackers = await hangingAccounts(s, source, hook.url, 5, 4);
    await until("every slot hanging", () => Promise.resolve(source.hanging >= 8 || undefined));
    const b = await s.account("scale");
    const wb = await create(s, b.key, hook.url);
    await new Promise((r) => setTimeout(r, 300)); // B's watch is due
    // An account holding one slot gets it back: it and B now both have none under way, and its
    // watches fell due first (probe BJ: taken in due order, B waited behind their backlog).
    const one = attackers.find((a) => source.hangingOf(a.id) === 1)!;
    const before = source.owners.length;
    source.releaseOne(one.id);
    await until("B's refresh", async () => {
      const w = (await watchesOf(s, b.key)).find((w) => w.id === wb.id)!;
      return w.refreshes >= 1 ? w : undefined;
    });
    assert.equal(source.owners[before], b.id, "the freed slot went to B first");
  } finally {
    source.release();
  }
});

Deno.test("webhook bound: one watch never has more than 20 undelivered events; the oldest are dropped and noted", async () => {
  const source = new PriceSource();
  source.moving = true;
  await using s = await startServer({
    source,
    watches: {
      // A watch due again at once: a change at every refresh, as fast as the loop runs.
      minSeconds: 0,
      allowPrivate: true,
      run: true,
      scheduler: { pollMs: 50, rateRetryMs: 20 },
      // The receiver fails; each event is tried once and then waits a minute.
      webhooks: { pollMs: 50, retryMs: 60_000 },
    },
  });
  await using hook = receiver(() => 500);
  const a = await s.account("scale");
  const w = await create(s, a.key, hook.url, 0);
  let most = 0;
  const record = await until("many more events than the bound", async () => {
    const r = await watchRecord(s, w.id);
    most = Math.max(most, await undelivered(s, w.id), r.pending?.length ?? 0);
    return r.refreshes > 3 * BOUND ? r : undefined;
  }, 15_000);
  most = Math.max(most, await undelivered(s, w.id));
  assert.ok(most <= BOUND, `${most} undelivered events of one watch`);
  assert.ok(record.refreshes > 3 * BOUND);
  // Listed with another key of the account: the refreshes, as fast as the loop runs, keep the
  // watch's own key's rate window full, and a list then got the 429 it should (one CI run).
  const lister = (await s.accounts.createKey(a.id)).value;
  const view = (await watchesOf(s, lister)).find((v) => v.id === w.id)!;
  const dropped = view.deliveries.filter((d) => d.result.startsWith("dropped"));
  assert.ok(dropped.length > 0, "no dropped event is noted");
  assert.match(dropped[0].result, /^dropped: 20 newer events of this watch were waiting$/);
  assert.equal(dropped[0].delivered, false);
  // Each event is tried at most once here: the receiver saw no more events than were queued.
  assert.equal(new Set(hook.got.map((g) => g.body)).size, hook.got.length);
});

Deno.test("webhook bound: a watch whose events are all delivered drops none, however many it sends", async () => {
  const source = new PriceSource();
  await using s = await startServer({
    source,
    watches: {
      // A watch due again at once; the test changes the price once the last event is delivered.
      minSeconds: 0,
      allowPrivate: true,
      run: true,
      scheduler: { pollMs: 20, rateRetryMs: 20 },
      webhooks: { pollMs: 20 },
    },
  });
  await using hook = receiver();
  const a = await s.account("scale");
  const w = await create(s, a.key, hook.url, 0);
  await until("the first refresh", async () => (await watchRecord(s, w.id)).refreshes || undefined);
  // Past the bound: a delivered event that still counted as waiting made each new one from the
  // 21st on "drop" one, noted on a watch whose receiver took every event.
  const events = BOUND + 5;
  for (let n = 1; n <= events; n++) {
    source.price = 10 + n;
    // Looked at more often than `until` does: 25 rounds of its 100 ms add up.
    const stop = Date.now() + 8_000;
    while (hook.got.length < n && Date.now() < stop) await new Promise((r) => setTimeout(r, 10));
    assert.equal(hook.got.length, n, `event ${n} was not sent within 8 s`);
  }
  const lister = (await s.accounts.createKey(a.id)).value;
  const view = await until("the last event noted delivered", async () => {
    const v = (await watchesOf(s, lister)).find((v) => v.id === w.id)!;
    const last = JSON.parse(hook.got[events - 1].body).event_id;
    return v.deliveries.some((d) => d.event_id === last && d.delivered) ? v : undefined;
  });
  assert.equal(hook.got.length, events, "one POST per change");
  assert.deepEqual(
    view.deliveries.filter((d) => !d.delivered).map((d) => d.result),
    [],
    "a watch whose receiver took every event has notes of failed or dropped ones",
  );
  assert.equal(await undelivered(s, w.id), 0);
});

Deno.test("inactive account: its events are not sent and its watches not refreshed until it is active again", async () => {
  const source = new PriceSource();
  await using s = await startServer({
    source,
    adminToken: ADMIN,
    watches: {
      minSeconds: 1,
      allowPrivate: true,
      run: true,
      scheduler: { pollMs: 50 },
      webhooks: { pollMs: 50, retryMs: 50, maxDelayMs: 100 },
    },
  });
  let status = 500;
  await using hook = receiver(() => status);
  const a = await s.account("scale");
  const w = await create(s, a.key, hook.url);
  await refreshed(s, a.key);
  source.price = 11;
  await until("failed attempts", () => Promise.resolve(hook.got.length >= 2 || undefined));

  await setStatus(s, a.id, "inactive");
  const dropped = await until("the queued event dropped", async () => {
    const r = await watchRecord(s, w.id);
    const note = r.deliveries.find((d) => d.result === "dropped: the account is inactive");
    return note && (await undelivered(s, w.id)) === 0 ? note : undefined;
  });
  assert.equal(dropped.delivered, false);
  const posts = hook.got.length;
  const fetched = source.calls;
  const refreshes = (await watchRecord(s, w.id)).refreshes;
  status = 204;
  source.price = 12;
  // Several refresh intervals and many retry periods.
  await new Promise((r) => setTimeout(r, 2_500));
  assert.equal(
    hook.got.length,
    posts,
    "a POST reached the receiver while the account was inactive",
  );
  assert.equal(source.calls, fetched, "a refresh fetched while the account was inactive");
  const paused = await watchRecord(s, w.id);
  assert.equal(paused.refreshes, refreshes);
  assert.equal(paused.status, "paused");

  await setStatus(s, a.id, "active");
  const got = await until("the change sent after resuming", () =>
    Promise.resolve(
      hook.got.slice(posts).find((g) => JSON.parse(g.body).after.price.amount === 12),
    ));
  assert.deepEqual(JSON.parse(got.body).before.price.amount, 11);
  const resumed = (await watchesOf(s, a.key)).find((v) => v.id === w.id)!;
  assert.equal(resumed.status, "active");
  assert.ok(resumed.deliveries[0].delivered);
});

Deno.test("a refresh under way holds its credit, as a call does, until it ends (a stop names what is held)", async () => {
  const source = new PriceSource();
  await using s = await refreshServer(source, 8);
  await using hook = receiver();
  const [a] = await hangingAccounts(s, source, hook.url, 1, 1);
  try {
    await until("the hanging refresh", () => Promise.resolve(source.hanging >= 1 || undefined));
    assert.equal(heldCredits(a.id), 1);
  } finally {
    source.release();
  }
  await until("the refresh's end", () => Promise.resolve(heldCredits(a.id) === 0 || undefined));
});

/** Attempts end at 2 s, and one that fails after 200 ms marks its account and watch slow. */
const SLOW_AFTER_200_MS = {
  ...EIGHT_SLOTS,
  timeoutMs: 2_000,
  slowMs: 200,
};

for (const backlog of [0, 150]) {
  Deno.test(`webhook fairness: within a slow account, events of watches whose receiver answers go before those of one that hangs${backlog ? `, behind ${backlog} of its events already due (probe GL)` : " (probe GJ)"}`, async () => {
    const source = new PriceSource();
    source.moving = true; // every refresh is a change: each watch has an event a second
    await using s = await watchServer(source, { pollMs: 50 }, SLOW_AFTER_200_MS);
    await using healthy = receiver();
    const dead = failingThenHanging();
    try {
      const a = await s.account("scale");
      const good = [await create(s, a.key, healthy.url), await create(s, a.key, healthy.url)];
      for (let i = 0; i < 2; i++) await create(s, a.key, `${dead.url}/${i}`);
      // Its receiver has failed slowly: the account is slow (one slot), and so is that watch.
      const failed = await until("a slow failure", async () => {
        const ws = await watchesOf(s, a.key);
        return ws.find((w) => w.deliveries.some((d) => d.result === "HTTP 500"));
      });
      dead.hang();
      // Events of the failing watch due before any of the healthy ones' (probe GL: the first 64
      // due were looked through, found to be all its own, and the slot went to them again).
      for (let i = 0; i < backlog; i++) {
        const op = s.kv.atomic();
        queueDelivery(op, {
          id: `evt_backlog${i}`,
          watch_id: failed.id,
          account_id: a.id,
          body: "{}",
          created_at: Date.now(),
          attempts: 1,
          next_at: Date.now() - 60_000 + i,
        });
        await op.commit();
      }
      const from = healthy.got.length;
      const refreshesAt = async () =>
        (await watchesOf(s, a.key)).filter((w) => good.some((g) => g.id === w.id))
          .reduce((n, w) => n + w.refreshes, 0);
      const before = await refreshesAt();
      await new Promise((r) => setTimeout(r, 6_000));
      const made = (await refreshesAt()) - before;
      const got = healthy.got.length - from;
      // Taken in due order, each of the dead receiver's 2 s attempts held the one slot in turn
      // with the healthy events, which fell behind by about one a second.
      assert.ok(made >= 8, `${made} refreshes`);
      assert.ok(got >= made - 5, `${got} of about ${made} events delivered`);
    } finally {
      await dead.close();
    }
  });
}

Deno.test("webhook outbox: entries whose event is gone are dropped many a pass, not one (probe GM)", async () => {
  const source = new PriceSource();
  await using s = await watchServer(source, { pollMs: 50 }, { ...SLOW_AFTER_200_MS, pollMs: 200 });
  await using hook = receiver();
  const a = await s.account("scale");
  const w = await create(s, a.key, hook.url, 3600);
  await refreshed(s, a.key);
  // What a watch's 21st event leaves of the oldest it drops: its due entry, without the event.
  const op = s.kv.atomic();
  for (let i = 0; i < 300; i++) {
    op.set(KV.webhookDueOf(a.id, Date.now() - 60_000 + i, `evt_gone${i}`), `evt_gone${i} ${w.id}`);
  }
  await op.commit();
  const left = async () =>
    (await Array.fromAsync(s.kv.list({ prefix: KV.webhookDueOfAccount(a.id) })))
      .length;
  // About five passes of 200 ms (a pass reads what it may claim and 64 more). Read one a pass,
  // 290 were still there after 2 s; read only what it may claim, they would take 15 s. Waited for
  // rather than slept on: on a loaded machine passes come late (probe HV: 17 left after 2 s).
  await until(
    "every gone entry dropped",
    async () => (await left()) === 0 ? true : undefined,
    6_000,
  );
  assert.equal(await left(), 0);
});

/**
 * A receiver whose answer the test sets by path (`fail`: 500 at once, `slowFail`: 500 after
 * 300 ms, `ok`: 204, `hang`: none until close), counting each event's requests by its event_id.
 */
function switchboard() {
  const mode = new Map<string, "fail" | "slowFail" | "ok" | "hang">();
  const seen: { path: string; event: string }[] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const event = JSON.parse(await req.text()).event_id ?? "";
    seen.push({ path, event });
    const m = mode.get(path) ?? "fail";
    if (m === "ok") return new Response(null, { status: 204 });
    if (m === "hang") await released;
    if (m === "slowFail") await new Promise((r) => setTimeout(r, 300));
    return new Response(null, { status: 500 });
  });
  return {
    url: (path: string) => `http://127.0.0.1:${server.addr.port}${path}`,
    mode,
    seen,
    count: (f: (s: { path: string; event: string }) => boolean) => seen.filter(f).length,
    async close() {
      release();
      await server.shutdown();
    },
  };
}

/** An event of watch `watchId` put straight into the outbox, due at `at`. */
async function queued(s: TestServer, accountId: string, watchId: string, id: string, at: number) {
  const op = s.kv.atomic();
  queueDelivery(op, {
    id,
    watch_id: watchId,
    account_id: accountId,
    body: JSON.stringify({ event_id: id }),
    created_at: Date.now(),
    attempts: 0,
    next_at: at,
  });
  assert.ok((await op.commit()).ok);
}

Deno.test("webhook fairness: a watch whose receiver failed slowly and then delivered goes before a hanging one again (probe GT W16)", async () => {
  const source = new PriceSource();
  // A failure after 200 ms or more marks the account (one slot) and the watch slow; an attempt
  // that hangs ends at 1 s.
  await using s = await watchServer(source, { pollMs: 50 }, {
    ...EIGHT_SLOTS,
    slowMs: 200,
    timeoutMs: 1_000,
  });
  const hooks = switchboard();
  try {
    const a = await s.account("scale");
    const r = await create(s, a.key, hooks.url("/r"), 3600);
    const h = await create(s, a.key, hooks.url("/h"), 3600);
    await refreshed(s, a.key);
    // Both receivers fail slowly: both watches are marked, and the account is slow.
    hooks.mode.set("/r", "slowFail").set("/h", "slowFail");
    await queued(s, a.id, r.id, "evt_r1", Date.now());
    await queued(s, a.id, h.id, "evt_h1", Date.now());
    await until("a slow failure of each watch", async () => {
      for (const id of [r.id, h.id]) {
        if (!(await watchRecord(s, id)).deliveries.some((d) => d.result === "HTTP 500")) return;
      }
      return true;
    });
    // R's receiver recovers and takes its event; H's hangs.
    hooks.mode.set("/r", "ok").set("/h", "hang");
    await until(
      "R's event delivered",
      async () => (await watchRecord(s, r.id)).deliveries.some((d) => d.delivered) || undefined,
    );
    // H has events due before R's next one: taken in due order, each would hold the account's
    // one slot for its timeout before R's event had its turn.
    const hBefore = hooks.count((x) => x.path === "/h");
    for (let i = 0; i < 4; i++) {
      await queued(s, a.id, h.id, `evt_h_backlog${i}`, Date.now() - 60_000 + i);
    }
    await queued(s, a.id, r.id, "evt_r2", Date.now() - 30_000);
    await until(
      "R's second event",
      () => Promise.resolve(hooks.count((x) => x.event === "evt_r2") || undefined),
    );
    const hAttempts = hooks.count((x) => x.path === "/h") - hBefore;
    // At most the attempt of H that held the slot when the events were queued (and one more
    // started before R's event was claimed); a recovered watch still marked waits behind all four.
    assert.ok(hAttempts <= 2, `${hAttempts} attempts of the hanging watch went before R's event`);
  } finally {
    await hooks.close();
  }
});

Deno.test("webhook bound: a dropped event's note gives the attempt it would have had next (probe GT ST3)", async () => {
  const source = new PriceSource();
  await using s = await startServer({
    source,
    watches: {
      // A watch due again at once: each price move is an event at the next refresh.
      minSeconds: 0,
      allowPrivate: true,
      run: true,
      scheduler: { pollMs: 50, rateRetryMs: 20 },
      webhooks: { pollMs: 50, retryMs: 50, maxDelayMs: 100, timeoutMs: 30_000 },
    },
  });
  const hooks = switchboard();
  try {
    const a = await s.account("scale");
    const w = await create(s, a.key, hooks.url("/w"), 0);
    await until(
      "the first refresh",
      async () => (await watchRecord(s, w.id)).refreshes || undefined,
    );
    // The first event fails at once, three times or more.
    hooks.mode.set("/w", "fail");
    source.price = 11;
    const first = await until("the first event", () => Promise.resolve(hooks.seen[0]?.event));
    await until("three failed attempts of it", async () => {
      if (hooks.count((x) => x.event === first) < 3) return;
      // The third's failure noted on the watch.
      return (await watchRecord(s, w.id)).deliveries.filter((d) => d.event_id === first).length >= 3
        ? true
        : undefined;
    });
    // From now on no attempt ends (and none is noted); 20 newer events drop the first.
    hooks.mode.set("/w", "hang");
    const failed = hooks.count((x) => x.event === first);
    source.moves = BOUND;
    const dropped = await until(
      "the first event dropped",
      async () =>
        (await watchRecord(s, w.id)).deliveries.find((d) =>
          d.event_id === first && d.result.startsWith("dropped")
        ),
    );
    assert.equal(dropped.result, "dropped: 20 newer events of this watch were waiting");
    // Its attempts finished (failed) before, and one more: the attempt it would have had next.
    assert.ok(dropped.attempt >= 4, `dropped as attempt ${dropped.attempt}`);
    assert.ok(dropped.attempt <= hooks.count((x) => x.event === first) + 1);
    assert.ok(failed >= 3);
  } finally {
    await hooks.close();
  }
});

Deno.test("in-flight slots: an account marked slow gets one slot, not its per-account share (probe BJ)", async () => {
  // The e2e tests above give each slow account one watch, so they cannot tell one slot from
  // perAccount: here, InFlight itself (8 slots, 3 per account, 2 of them kept).
  const slots = new InFlight(8, 3);
  assert.equal(slots.free("fast"), 3, "an account not marked slow: its per-account share");
  assert.equal(slots.free("slow", true), 1, "an account marked slow: one slot");
  let release!: () => void;
  const hanging = new Promise<void>((r) => (release = r));
  slots.run("slow", () => hanging, () => {});
  assert.equal(slots.free("slow", true), 0, "a slow account with one attempt under way: none");
  assert.equal(slots.free("slow"), 2, "the same account, no longer slow: the rest of its share");
  release();
  await slots.idle();
  assert.equal(slots.free("slow", true), 1);
});
