/**
 * Watch refreshes at their edges, over real HTTP (real server, real KV file, loopback receivers;
 * the fake marketplace serving the real product page where the page matters): which account a
 * freed slot goes to, how long a refresh deferred for the key's rate waits, that a watch's zip
 * reaches its page, what a refresh whose page fails just as the server stops records, that a
 * refresh the store refuses to record is refunded, and that a refresh whose lease ran out writes
 * nothing back.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { FAST_WATCHES, startRig } from "./upstream_harness.ts";
import { ControlledSource, ManualClock, startServer } from "./test_server.ts";
import {
  createdWatch,
  FAST,
  hourlyWatch,
  postWatch,
  receiver,
  until,
  watchList,
} from "./webhook_receiver.ts";
import { detailsAt } from "./watch_details.ts";
import { fixture } from "./fixture.ts";
import type { DataRequest, DataSource } from "../upstream/data_source.ts";
import { ApiError } from "../core/api_error.ts";
import { KV } from "../metering/kv_layout.ts";
import { createWatch, updateWatch, type Watch } from "../watches/store.ts";
import { MAX_WATCHES_PER_ACCOUNT } from "../schemas/watches.ts";

const DP = "https://www.amazon.com/dp/B07H57DNVV";
const PAGE = "product/amazon.com__app-B07H57DNVV.html";

const stored = async (kv: Deno.Kv, id: string) => (await kv.get<Watch>(KV.watch(id))).value!;

/** Details answers at once, except those of accounts in `hang`, which wait until released. */
class HangingAccounts extends ControlledSource {
  readonly hang = new Set<string>();
  /** The account of each details fetch, in the order they started. */
  readonly owners: string[] = [];
  readonly #waiting = new Map<string, (() => void)[]>();

  hangingOf(owner: string): number {
    return this.#waiting.get(owner)?.length ?? 0;
  }

  get hanging(): number {
    return [...this.#waiting.values()].reduce((n, q) => n + q.length, 0);
  }

  /** Ends the oldest hanging fetch of `owner` (as a failure). */
  releaseOne(owner: string): void {
    this.#waiting.get(owner)?.shift()?.();
  }

  releaseAll(): void {
    this.hang.clear();
    for (const q of this.#waiting.values()) q.splice(0).forEach((r) => r());
  }

  override async fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name !== "details") return super.fetch(req);
    this.calls++;
    const owner = req.owner ?? "";
    this.owners.push(owner);
    if (this.hang.has(owner)) {
      const queue = this.#waiting.get(owner) ?? [];
      this.#waiting.set(owner, queue);
      await new Promise<void>((r) => queue.push(r));
      throw new Error("released");
    }
    return detailsAt(req.params.asin, 10);
  }
}

Deno.test("refresh fairness: a freed slot goes to an account with nothing under way before one that still has a refresh under way", async () => {
  const source = new HangingAccounts();
  // Three slots, none kept for idle accounts (a quarter of 3 rounds to 0), two per account.
  await using s = await startServer({
    source,
    watches: {
      ...FAST_WATCHES,
      scheduler: { pollMs: 50, maxInFlight: 3, perAccount: 2 },
    },
  });
  await using hook = receiver();
  try {
    const a = await s.account("scale");
    source.hang.add(a.id);
    for (let i = 0; i < 4; i++) await createdWatch(s.url, a.key, hook.url);
    await until(
      "A's two refreshes hanging",
      () => Promise.resolve(source.hangingOf(a.id) >= 2 || undefined),
    );
    const c = await s.account("scale");
    source.hang.add(c.id);
    await createdWatch(s.url, c.key, hook.url);
    await until("every slot taken", () => Promise.resolve(source.hanging >= 3 || undefined));
    const b = await s.account("scale");
    const wb = await createdWatch(s.url, b.key, hook.url);
    await new Promise((r) => setTimeout(r, 300)); // B's watch is due, behind A's two
    const before = source.owners.length;
    // A now has one refresh under way, as C has; B has none and goes first.
    source.releaseOne(a.id);
    await until("B's first refresh", async () => {
      const w = (await watchList(s.url, b.key)).find((w) => w.id === wb.id)!;
      return w.refreshes >= 1 ? w : undefined;
    });
    assert.equal(source.owners[before], b.id, "the freed slot went to B, with none under way");
  } finally {
    source.releaseAll();
  }
});

/**
 * A free-plan rig (one call a second) whose meter clock stands still once the watch's first
 * refresh has taken the key's call: every later refresh is deferred for the rate, uncharged. The
 * watch is put straight into the store: made over HTTP, its creation took the key's call of that
 * second, and a first refresh that ran before the test moved the clock was deferred itself.
 */
async function rateBoundWatch(everySeconds: number, rateRetryMs: number) {
  const rig = await startRig({
    plan: "free",
    watches: { ...FAST, scheduler: { pollMs: 20, rateRetryMs } },
    clock: new ManualClock(),
  });
  try {
    rig.fake.page(DP, PAGE);
    const { id, keyId } = await rig.server.account("free");
    const watch = { ...hourlyWatch(id, keyId), every_seconds: everySeconds };
    assert.ok(await createWatch(rig.server.kv, watch, MAX_WATCHES_PER_ACCOUNT));
    rig.server.deps.watches.scheduler.wake();
    await until(
      "the first refresh",
      async () => (await stored(rig.server.kv, watch.id)).refreshes || undefined,
    );
    return { rig, id: watch.id, [Symbol.asyncDispose]: () => rig[Symbol.asyncDispose]() };
  } catch (e) {
    await rig[Symbol.asyncDispose]();
    throw e;
  }
}

/** Makes the watch due now (with `deferrals` already counted) and reads its next deferral. */
async function nextDeferral(
  rig: Awaited<ReturnType<typeof startRig>>,
  id: string,
  deferrals: number,
) {
  await updateWatch(
    rig.server.kv,
    id,
    (w) => ({ ...w, rate_deferrals: deferrals, next_at: Date.now() }),
  );
  return await until("the deferral", async () => {
    const w = await stored(rig.server.kv, id);
    return w.rate_deferrals === deferrals + 1 ? w : undefined;
  }, 10_000);
}

// The wait is the stored next_at less the time it was read, so it can only read shorter than
// what was set; the wrong answers are twice or more the bound.
Deno.test("rate deferral: the first refresh deferred for the key's rate waits the retry delay, not twice it nor the watch's interval", async () => {
  await using t = await rateBoundWatch(600, 20_000);
  const w = await nextDeferral(t.rig, t.id, 0);
  const wait = w.next_at - Date.now();
  assert.ok(wait <= 20_000, `the first deferral waits ${wait} ms`);
  assert.equal(w.refreshes, 1, "deferred, not refreshed");
});

Deno.test("rate deferral: a watch deferred many times waits no longer than its own interval (it does not go silent for hours)", async () => {
  // 20 s, 40 s, 80 s, … : the fourth deferral would be 160 s, past the watch's minute.
  await using t = await rateBoundWatch(60, 20_000);
  const w = await nextDeferral(t.rig, t.id, 3);
  const wait = w.next_at - Date.now();
  assert.ok(wait <= 60_000, `a deferral waits ${wait} ms, past the watch's 60 s interval`);
  assert.equal(w.refreshes, 1, "deferred, not refreshed");
});

Deno.test("watch refresh: a watch made for a postcode refreshes the page at that postcode", async () => {
  await using rig = await startRig({ watches: FAST_WATCHES, plan: "scale" });
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const { id } = await createdWatch(rig.server.url, rig.key, hook.url, 3600, { zip: "10001" });
  const w = await until("the first refresh", async () => {
    const w = (await watchList(rig.server.url, rig.key)).find((w) => w.id === id);
    return w && (w.refreshes >= 1 || w.last_error) ? w : undefined;
  }, 15_000);
  assert.equal(w.last_error, null);
  // The marketplace's location flow ran for 10001, and the product page was read in its session.
  const posts = rig.fake.requests.filter((q) => q.method === "POST");
  assert.equal(posts.length, 1, "one location flow");
  const session = /session-id=[^;]+/.exec(posts[0].cookie)![0];
  const pages = rig.fake.requests.filter((q) => q.path.startsWith("/dp/"));
  assert.equal(pages.length, 1);
  assert.ok(pages[0].cookie.includes(session), "the page was read at the watch's postcode");
});

/** Details refreshes that wait for the stop, then fail with the page's own error (a 404). */
class NotFoundAtStop extends ControlledSource {
  started = 0;
  override fetch(req: DataRequest): Promise<unknown> {
    if (req.endpoint.name !== "details") return super.fetch(req);
    this.started++;
    const signal = req.signal!;
    return new Promise((_, reject) =>
      signal.addEventListener(
        "abort",
        () => reject(new ApiError(404, "not_found", "no such product")),
        { once: true },
      )
    );
  }
}

Deno.test("watch refresh: a page error met while the server stops is recorded as that error and waits the interval, not taken for the stop", async () => {
  // Taken for the stop, the refresh is due again at once: the next process fetches (and
  // charges) a missing page again right away instead of an hour later.
  const stop = new AbortController();
  const source = new NotFoundAtStop();
  await using s = await startServer({ source, watches: FAST_WATCHES, stopping: stop.signal });
  await using hook = receiver();
  const { key } = await s.account("growth");
  const r = await postWatch(s.url, key, hook.url, 3_600);
  assert.equal(r.status, 201);
  const { id } = await r.json();
  await until("the first refresh to start", () => Promise.resolve(source.started > 0 || undefined));
  const stopped = s.deps.watches.stop();
  stop.abort(new Error("the drain ended"));
  await stopped;
  const w = await stored(s.kv, id);
  assert.match(w.last_error ?? "", /^not_found: /);
  assert.ok(
    w.next_at - Date.now() > 3_000_000,
    `due again in ${w.next_at - Date.now()} ms, not in an hour`,
  );
});

Deno.test("watch refresh: a refresh whose result the store refuses to record is refunded", async () => {
  // Another program holds the KV file's write lock just as the page has been read: the commit
  // of the result fails, the watch records nothing, and its credit is given back.
  let path = "";
  let held: Promise<void> | null = null;
  await using rig = await startRig({
    watches: FAST_WATCHES,
    plan: "scale",
    wrap: (inner: DataSource) => ({
      async fetch(req: DataRequest) {
        const answer = await inner.fetch(req);
        if (!held) {
          const other = new DatabaseSync(path);
          other.exec("BEGIN IMMEDIATE");
          held = new Promise((r) =>
            setTimeout(() => {
              other.exec("COMMIT");
              other.close();
              r();
            }, 1_500)
          );
        }
        return answer;
      },
    }),
  });
  path = rig.server.kvPath;
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const created = await createdWatch(rig.server.url, rig.key, hook.url, 3_600);
  await until("the lock taken", () => Promise.resolve(held ? true : undefined));
  await held;
  await until("the refresh's failure", () =>
    Promise.resolve(
      rig.server.errors.find((e) => e.startsWith(`refresh of watch ${created.id} failed`)),
    ));
  const usage = await until("the refund", async () => {
    const u = await rig.call("/v1/usage");
    return u.body.requests_used === 0 ? u : undefined;
  }, 10_000);
  assert.equal(usage.body.requests_used, 0);
  assert.equal((await stored(rig.server.kv, created.id)).refreshes, 0, "nothing recorded");
});

Deno.test("watch refresh: a refresh that ends after its lease ran out (the watch refreshed again meanwhile) writes nothing back and sends nothing", async () => {
  // Its page is older than the one the refresh after it recorded: written back, it sent the
  // receiver a change back to the old price, and another one forward again.
  const html = await fixture(PAGE);
  let calls = 0;
  let lateDone: (() => void) | null = null;
  const late = new Promise<void>((r) => (lateDone = r));
  let setPage: ((html: string) => void) | null = null;
  await using rig = await startRig({
    watches: { ...FAST_WATCHES, scheduler: { ...FAST_WATCHES.scheduler, leaseMs: 1_000 } },
    plan: "scale",
    wrap: (inner: DataSource) => ({
      async fetch(req: DataRequest) {
        const n = ++calls;
        const answer = await inner.fetch(req);
        if (n === 2) {
          // The price drops while this answer (the old price) is still on its way, past its lease.
          setPage!(html.replaceAll("$11.88", "$10.50"));
          await new Promise((r) => setTimeout(r, 3_000));
          lateDone!();
        }
        return answer;
      },
    }),
  });
  setPage = (page) => rig.fake.page(DP, { status: 200, html: page });
  await using hook = receiver();
  rig.fake.page(DP, PAGE);
  const { id } = await createdWatch(rig.server.url, rig.key, hook.url, 1);
  await late;
  const after = (await stored(rig.server.kv, id)).refreshes;
  await until("two refreshes after the late answer", async () => {
    const w = await stored(rig.server.kv, id);
    return w.refreshes >= after + 2 && !w.pending?.length ? w : undefined;
  }, 15_000);
  const prices = hook.got.map((g) => JSON.parse(g.body).after.price.amount);
  assert.deepEqual(prices, [10.5], "one event, 11.88 to 10.50");
  const w = (await watchList(rig.server.url, rig.key)).find((w) => w.id === id)!;
  assert.equal(w.last?.price?.amount, 10.5);
});
