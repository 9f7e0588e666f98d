/**
 * A backup holds what must survive and leaves out what refills itself (README, "Backup and
 * restore"): the result cache and the sign-in, sign-up and mail counters are not in the file; accounts,
 * key digests, watches (with their secrets and schedule) and everything else are. Real KV file, the backup function the CLI runs.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { backup, restore } from "../cli/backup.ts";
import { DEVICE_MS, knownDevice, rememberDevice } from "../metering/sign_in_devices.ts";
import { hashKey } from "../metering/api_key.ts";
import { KV } from "../metering/kv_layout.ts";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { createWatch } from "../watches/store.ts";
import { hourlyWatch } from "./webhook_receiver.ts";

Deno.test("backup leaves out the result cache and sign-in and mail counters, and keeps the accounts, keys and watches", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/shelf.kv`);
  try {
    const accounts = new Accounts(kv, builtinPlans(), systemClock);
    const a = await accounts.create("keep@example.com", "starter");
    const { key } = await accounts.createKey(a.id);
    const w = hourlyWatch(a.id, key.id);
    await createWatch(kv, w, 100);
    await kv.set(KV.resultCache("details", "abc"), { at: 1, json: "{}" });
    await kv.set(KV.signinAttempts("def"), { count: 3, since: 1 });
    await kv.set(KV.accountMails("ghi"), { count: 2, since: 1 });
    await kv.set(KV.alertAddressMails("ghj"), { count: 2, since: 1 });
    await kv.set(KV.clientMails("jkl"), { count: 2, since: 1 });
    await kv.set(KV.clientSignins("mno"), { count: 2, since: 1 });
    await kv.set(KV.clientSignups("pqr"), { count: 2, since: 1 });
    const file = `${dir}/backup.jsonl`;
    await backup(kv, file);
    const text = await Deno.readTextFile(file);
    assert.ok(!text.includes('"result_cache"'), "no result cache entry");
    assert.ok(!text.includes('"signin_attempts"'), "no sign-in counter");
    assert.ok(!text.includes('"account_mails"'), "no account-mail counter");
    assert.ok(!text.includes('"alert_address_mails"'), "no alert-address mail counter");
    assert.ok(!text.includes('"client_mails"'), "no client-mail counter");
    assert.ok(!text.includes('"client_signins"'), "no client sign-in counter");
    assert.ok(!text.includes('"client_signups"'), "no client sign-up counter");
    assert.ok(text.includes(`"${a.id}"`), "the account is there");
    assert.ok(text.includes('"key_hash"'), "the key digest is there");
    for (const part of ['"watch"', '"watch_of"', '"watch_due"', '"watch_count"', w.secret]) {
      assert.ok(text.includes(part), `the watch is there: ${part}`);
    }
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sign-in devices come back with the life they have left; the device counters, and devices stored without a life, do not (probe FR)", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/shelf.kv`);
  const target = await Deno.openKv(`${dir}/restored.kv`);
  try {
    const now = Date.now();
    const token = await rememberDevice(kv, "dev@example.com", null, now, 0);
    assert.ok(token);
    const digest = hashKey(token);
    // A device stored by an earlier version: no expires_at in its value.
    await kv.set(KV.signinDevice("old"), { email: hashKey("dev@example.com"), epoch: 0 });
    await kv.set(KV.deviceSignins("stu"), { count: 2, since: now });
    await kv.set(KV.sessionPasswordChecks("vwx"), { count: 2, since: now });
    await kv.set(KV.deviceGrants("yza"), { count: 2, since: now });
    const file = `${dir}/backup.jsonl`;
    await backup(kv, file);
    const text = await Deno.readTextFile(file);
    for (const prefix of ["device_signins", "session_password_checks", "device_grants"]) {
      assert.ok(!text.includes(`"${prefix}"`), `no ${prefix} counter`);
    }
    assert.ok(!text.includes('"old"'), "a device without its life is left out");
    assert.ok(text.includes(digest), "the device is there");

    // A backup of an earlier version held them: restore leaves them out too.
    const older = `${dir}/older.jsonl`;
    const lines = text.trimEnd().split("\n");
    const extra = [
      { key: [{ s: "signin_device" }, { s: "old" }], v: { email: "e", epoch: 0 } },
      { key: [{ s: "device_grants" }, { s: "yza" }], v: { count: 1, since: now } },
    ].map(({ key, v }) => JSON.stringify({ key, value: { t: "json", v } }));
    const header = JSON.parse(lines[0]);
    header.entries += extra.length;
    await Deno.writeTextFile(
      older,
      [JSON.stringify(header), ...lines.slice(1), ...extra].join("\n"),
    );
    assert.equal(await restore(target, older), lines.length - 1);
    assert.equal((await target.get(KV.signinDevice("old"))).versionstamp, null);
    assert.equal((await target.get(KV.deviceGrants("yza"))).versionstamp, null);

    // The restored device is known until its life ends, not for good.
    assert.equal(await knownDevice(target, token, "dev@example.com", 0, now + 1000), digest);
    assert.equal(await knownDevice(target, token, "dev@example.com", 0, now + DEVICE_MS + 1), null);
    // KV's own expiry column (-1 is "never"): no restored entry lives for good.
    const sqlite = new DatabaseSync(`${dir}/restored.kv`);
    try {
      const rows = sqlite.prepare("SELECT expiration_ms FROM kv").all() as {
        expiration_ms: number;
      }[];
      assert.ok(rows.some((r) => r.expiration_ms > now + DEVICE_MS - 60_000), "the device's life");
    } finally {
      sqlite.close();
    }
  } finally {
    kv.close();
    target.close();
    await Deno.remove(dir, { recursive: true });
  }
});
