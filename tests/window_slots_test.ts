/**
 * metering/window_slots.ts under a burst: exact slots, and store work that does not grow with the
 * burst (probe Y: 32,000 sign-ins at once from one client made every slot cost thousands of failed
 * commits, and every call that wrote to the store waited minutes behind them). A real KV file;
 * the store is only watched, through a proxy that counts commits.
 */
import assert from "node:assert/strict";
import { reserveSlots } from "../metering/window_slots.ts";
import { countedKv, withCommits } from "./counted_kv.ts";

Deno.test("a burst on one window takes exactly its slots, with about one commit a slot, and a full window costs no store work", async () => {
  await using store = await countedKv();
  const window = { key: ["client_signins", "burst"], limit: 100 };
  const now = Date.now();
  const results = await Promise.all(
    Array.from({ length: 2_000 }, () => reserveSlots(store.kv, [window], 900_000, now)),
  );
  assert.equal(results.filter((r) => r === null).length, 100, "exactly the window's slots");
  assert.ok(store.commits() <= 110, `${store.commits()} commits for 100 slots`);
  const after = store.commits();
  const more = await Promise.all(
    Array.from({ length: 500 }, () => reserveSlots(store.kv, [window], 900_000, now + 1_000)),
  );
  assert.ok(more.every((r) => r === window));
  assert.equal(store.commits(), after, "refused by a window seen full, without a commit");
  // The window's end opens it again: a window of 900 s begun at `now` holds [now, now + 900 s), so
  // its last millisecond still refuses and the one after is a new window (probe HM: both ends could
  // move by one with no test failing).
  assert.equal(await reserveSlots(store.kv, [window], 900_000, now + 899_999), window);
  assert.equal(await reserveSlots(store.kv, [window], 900_000, now + 900_000), null);
  assert.equal(await reserveSlots(store.kv, [window], 900_000, now + 900_001), null);
});

Deno.test("a window whose every commit fails refuses the caller, never admits it (too contended)", async () => {
  await using store = await countedKv();
  // Every commit refused, as a window others keep writing would refuse them, or thrown, as a
  // store another process holds throws them.
  let n = 0;
  const refusing = withCommits(
    store.kv,
    () =>
      n++ % 2 ? Promise.resolve({ ok: false }) : Promise.reject(new Error("database is locked")),
  );
  const window = { key: ["client_signins", "contended"], limit: 100 };
  assert.equal(await reserveSlots(refusing, [window], 900_000, Date.now()), window);
  assert.ok(n >= 10, `${n} tries`);
  assert.equal((await store.kv.get(window.key)).value, null, "nothing was taken");
});
