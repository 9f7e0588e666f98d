/**
 * Device cookies (metering/sign_in_devices.ts) at the values the README documents: at most 20 new
 * devices an email a day, each known for 90 days after its last sign-in and stored with that life
 * as its KV expiry ("each stored 90 days"), so sign-ins without the cookie cannot grow the store
 * without end. The time is handed in; a real KV file is read for the expiry column.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { knownDevice, rememberDevice } from "../metering/sign_in_devices.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);
const EMAIL = "owner@example.com";

Deno.test("an email is given at most 20 new devices a day: the 21st sign-in without a cookie gets none until the day is over", async () => {
  await using kv = await Deno.openKv(":memory:");
  const tokens: (string | null)[] = [];
  for (let i = 0; i < 20; i++) tokens.push(await rememberDevice(kv, EMAIL, null, T0, 0));
  assert.ok(tokens.every((t) => t !== null && /^[0-9a-f]{64}$/.test(t)), "20 new devices");
  assert.equal(new Set(tokens).size, 20);
  assert.equal(await rememberDevice(kv, EMAIL, null, T0, 0), null, "the 21st");
  assert.equal(await rememberDevice(kv, EMAIL, null, T0 + HOUR + 60_000, 0), null, "61 min on");
  assert.equal(await rememberDevice(kv, EMAIL, null, T0 + DAY - 1, 0), null, "the day's end");
  // A known device is renewed whatever the day's count, and another email has its own 20.
  assert.equal(await rememberDevice(kv, EMAIL, tokens[0], T0 + HOUR, 0), tokens[0]);
  assert.notEqual(await rememberDevice(kv, "other@example.com", null, T0, 0), null);
  assert.notEqual(await rememberDevice(kv, EMAIL, null, T0 + DAY, 0), null, "a new day");
});

Deno.test("a device is known for 90 days after its sign-in: up to the millisecond before, not at its end", async () => {
  await using kv = await Deno.openKv(":memory:");
  const token = await rememberDevice(kv, EMAIL, null, T0, 0);
  assert.ok(token);
  const end = T0 + 90 * DAY;
  assert.ok(await knownDevice(kv, token, EMAIL, 0, T0 + 89 * DAY), "89 days on");
  assert.ok(await knownDevice(kv, token, EMAIL, 0, end - 1), "its life's last millisecond");
  assert.equal(await knownDevice(kv, token, EMAIL, 0, end), null, "at its end");
  assert.equal(await knownDevice(kv, token, EMAIL, 0, end + 1), null, "after");
  // A sign-in renews the life from then.
  assert.equal(await rememberDevice(kv, EMAIL, token, T0 + 30 * DAY, 0), token);
  assert.ok(await knownDevice(kv, token, EMAIL, 0, end), "renewed 30 days in");
  assert.equal(await knownDevice(kv, token, EMAIL, 0, T0 + 120 * DAY), null);
});

Deno.test("a device entry is stored with a KV expiry of its 90 days, not for good", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const kv = await Deno.openKv(path);
    let token: string | null;
    const before = Date.now();
    try {
      token = await rememberDevice(kv, EMAIL, null, before, 0);
    } finally {
      kv.close();
    }
    assert.ok(token);
    const sqlite = new DatabaseSync(path);
    try {
      // Two entries: the day's device grants (expiring within a day) and the device (90 days).
      // KV's expiry column holds -1 for an entry without one.
      const rows = sqlite.prepare("SELECT expiration_ms FROM kv").all() as {
        expiration_ms: number;
      }[];
      assert.equal(rows.length, 2, JSON.stringify(rows));
      assert.ok(
        rows.every((r) => r.expiration_ms > 0),
        `every entry expires: ${JSON.stringify(rows)}`,
      );
      const longest = Math.max(...rows.map((r) => r.expiration_ms));
      assert.ok(longest >= before + 90 * DAY - 60_000, `the device's life: ${longest - before}`);
      assert.ok(longest <= Date.now() + 90 * DAY, `no longer than 90 days: ${longest - before}`);
    } finally {
      sqlite.close();
    }
  } finally {
    await removeKvFiles(path);
  }
});
