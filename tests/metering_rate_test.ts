import assert from "node:assert/strict";
import { burst, count, ManualClock, startServer } from "./test_server.ts";
import { SteadyClock } from "../metering/clock.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

Deno.test("5 calls within one second on a 1 req/s key: 1 admitted, 4 rate_limited with Retry-After: 1", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 100));
  await using s = await startServer({ clock });
  const { key } = await s.account("free");
  const responses = await Promise.all(Array.from({ length: 5 }, () => s.get(OFFERS, key)));
  assert.equal(count(responses.map((r) => r.status), 200), 1);
  for (const r of responses) {
    const body = await r.json();
    if (r.status === 200) continue;
    assert.equal(r.status, 429);
    assert.equal(r.headers.get("retry-after"), "1");
    assert.equal(body.error.code, "rate_limited");
  }
});

Deno.test("the window resets on the next whole second, and refused calls do not count", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 900));
  await using s = await startServer({ clock });
  const { key } = await s.account("starter"); // 5 per second
  assert.equal(count(await burst(8, () => s.get(OFFERS, key)), 200), 5);
  clock.advance(100); // 12:00:01.000
  assert.equal(
    count(await burst(8, () => s.get(OFFERS, key)), 200),
    5,
    "a new window, not a sliding one",
  );
  clock.advance(999);
  assert.equal(count(await burst(1, () => s.get(OFFERS, key)), 429), 1, "still the same second");
});

Deno.test("/v1/usage is free and not rate-counted; a 422 takes a slot but no credit", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 0));
  await using s = await startServer({ clock });
  const { key } = await s.account("free");
  assert.deepEqual(await burst(5, () => s.get("/v1/usage", key)), [200, 200, 200, 200, 200]);
  const invalid = await s.get("/v1/products/offers", key);
  assert.equal(invalid.status, 422);
  await invalid.body?.cancel();
  const limited = await s.get(OFFERS, key);
  assert.equal(limited.status, 429, "the 422 was an admitted call");
  await limited.body?.cancel();
  clock.advance(1000);
  const u = await (await s.get("/v1/usage", key)).json();
  assert.equal(u.requests_used, 0);
});

Deno.test("rate limits are per key: a second key of the account has its own window", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 0));
  await using s = await startServer({ clock });
  const a = await s.account("starter");
  const { value: second } = await s.accounts.createKey(a.id, { name: "second" });
  assert.equal(count(await burst(6, () => s.get(OFFERS, a.key)), 200), 5);
  assert.equal(count(await burst(6, () => s.get(OFFERS, second)), 200), 5);
});

Deno.test("a key created in the second another was revoked in starts from its window (probe ER)", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 100));
  await using s = await startServer({ clock });
  const a = await s.account("free"); // 1 per second, 1 key
  assert.deepEqual(await burst(1, () => s.get(OFFERS, a.key)), [200]);
  let value = a.key;
  for (let i = 0; i < 3; i++) {
    await s.accounts.revokeKey((await s.accounts.lookupKey(value))!.key_id);
    ({ value } = await s.accounts.createKey(a.id, { name: `again ${i}` }));
    assert.deepEqual(await burst(1, () => s.get(OFFERS, value)), [429], `replacement ${i}`);
  }
  clock.advance(900); // the next second: the new key's window opens as any key's would
  assert.equal(count(await burst(2, () => s.get(OFFERS, value)), 200), 1);
  await s.accounts.revokeKey((await s.accounts.lookupKey(value))!.key_id);
  clock.advance(1000); // a key made a second after the last revocation starts empty
  ({ value } = await s.accounts.createKey(a.id, { name: "later" }));
  assert.deepEqual(await burst(1, () => s.get(OFFERS, value)), [200]);
});

Deno.test("instances whose clocks differ: a key replacing a revoked one is held to the window the fast one opened, as the revoked key was (probes FE, FF, FG)", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const fast = new ManualClock(Date.UTC(2026, 0, 1, 12, 1, 0, 200));
  const slow = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0, 200)); // a minute behind
  await using f = await startServer({ clock: fast, kvPath });
  await using w = await startServer({ clock: slow, kvPath });
  const a = await f.account("free");
  let value = a.key;
  // Each call on the fast instance, each rotation on the slow one: a fresh window every time let
  // ten calls through in one second (probe FG).
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    statuses.push(...await burst(1, () => f.get(OFFERS, value)));
    statuses.push(...await burst(1, () => w.get(OFFERS, value)));
    await w.accounts.revokeKey((await w.accounts.lookupKey(value))!.key_id);
    ({ value } = await w.accounts.createKey(a.id, { name: `rotated ${i}` }));
  }
  assert.equal(count(statuses, 200), 1, statuses.join(","));
  // Once the fast clock's second has passed, the key's window opens as any key's would.
  fast.advance(1000);
  assert.deepEqual(await burst(1, () => f.get(OFFERS, value)), [200]);
  await removeKvFiles(kvPath);
});

Deno.test("a lagging clock cannot reopen the window: two instances 1.5 s apart on one store admit 5, not more (issue 13.6)", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const ahead = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 10, 200));
  const behind = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 8, 700));
  await using a = await startServer({ clock: ahead, kvPath });
  await using b = await startServer({ clock: behind, kvPath });
  const { key } = await a.account("starter"); // 5 per second
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await (i % 2 ? b : a).get(OFFERS, key);
    await r.body?.cancel();
    statuses.push(r.status);
  }
  assert.equal(count(statuses, 200), 5, `alternating instances: ${statuses.join(",")}`);
  const late = await b.get(OFFERS, key);
  assert.equal(
    late.status,
    429,
    "the lagging instance's older second counts against the newer window",
  );
  assert.equal(late.headers.get("retry-after"), "1");
  await late.body?.cancel();
  ahead.advance(1_000); // the newest second moves on: a fresh window
  assert.equal(count(await burst(8, () => a.get(OFFERS, key)), 200), 5);
  await removeKvFiles(kvPath);
});

Deno.test("one instance whose clock steps back does not reset its window", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 5, 500));
  await using s = await startServer({ clock });
  const { key } = await s.account("starter");
  assert.equal(count(await burst(5, () => s.get(OFFERS, key)), 200), 5);
  clock.advance(-2_000);
  assert.equal(
    count(await burst(5, () => s.get(OFFERS, key)), 200),
    0,
    "an earlier second is not a new window",
  );
});

Deno.test("the service's clock goes on from where it was after the wall clock steps back an hour: windows keep opening, one each two seconds", async () => {
  const wall = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 5, 500));
  const monotonic = new ManualClock(1_000);
  const clock = new SteadyClock(() => wall.now(), () => monotonic.now());
  await using s = await startServer({ clock });
  const { key } = await s.account("starter"); // 5 per second
  assert.equal(count(await burst(6, () => s.get(OFFERS, key)), 200), 5);
  const later = (ms: number) => {
    wall.advance(ms);
    monotonic.advance(ms);
  };
  wall.advance(-3_600_000);
  later(2_000);
  assert.equal(count(await burst(6, () => s.get(OFFERS, key)), 200), 5, "a window two seconds on");
  later(2_000);
  assert.equal(count(await burst(6, () => s.get(OFFERS, key)), 200), 5);
  // Twice the step after it, the wall clock is followed again.
  later(7_200_000);
  assert.equal(clock.now(), wall.now());
});

Deno.test("SteadyClock follows the wall clock forward, and after a step back carries on at half pace until they meet", () => {
  let wall = 10_000;
  let mono = 0;
  const clock = new SteadyClock(() => wall, () => mono);
  assert.equal(clock.now(), 10_000);
  wall += 250;
  mono += 250;
  assert.equal(clock.now(), 10_250);
  wall += 60_000; // a step forward (a resumed VM): followed
  mono += 10;
  assert.equal(clock.now(), 70_250);
  wall -= 5_000; // a step back: carried on
  mono += 100.6;
  assert.equal(clock.now(), 70_300);
  wall += 4_000;
  mono += 4_000;
  assert.equal(clock.now(), 72_300);
  wall += 6_000;
  mono += 6_000;
  assert.equal(clock.now(), 75_300);
  wall += 200; // the wall clock has passed the carried time again
  mono += 200;
  assert.equal(clock.now(), wall);
});

Deno.test("SteadyClock comes back to a wall clock that was set right after booting two hours ahead (probe GF)", () => {
  const H = 3_600_000;
  let wall = Date.UTC(2026, 0, 1, 14);
  let mono = 0;
  const clock = new SteadyClock(() => wall, () => mono);
  clock.now();
  wall -= 2 * H; // NTP sets it right
  for (const [hours, ahead] of [[1, 1.5 * H], [2, H], [3, 0.5 * H], [4.001, 0]]) {
    mono = hours * H;
    wall = Date.UTC(2026, 0, 1, 12) + hours * H;
    assert.equal(clock.now() - wall, ahead, `${hours} h on`);
  }
});

Deno.test("SteadyClock does not run ahead of a wall clock that never steps, however often it is read (probe GH)", () => {
  // A call every 150 ns of monotonic time, on a wall clock of whole milliseconds near 1.8e12 that
  // keeps exact pace with it: summing the gaps ran 15 ms ahead every million calls.
  let mono = 5_000;
  const start = 1_795_000_000_000;
  const clock = new SteadyClock(() => start + Math.floor(mono - 5_000), () => mono);
  let ahead = 0;
  for (let i = 0; i < 400_000; i++) {
    mono += 0.00015;
    ahead = Math.max(ahead, clock.now() - (start + Math.floor(mono - 5_000)));
  }
  // At most the rounding of one reading at a millisecond's edge, never a sum of them.
  assert.ok(ahead <= 1, `${ahead} ms ahead`);
});
