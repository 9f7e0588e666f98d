/**
 * A backup holds what must survive and leaves out what refills itself (README, "Backup and
 * restore"): the result cache and the sign-in, sign-up and mail counters are not in the file; accounts,
 * key digests, watches (with their secrets and schedule) and everything else are. Real KV file, the backup function the CLI runs.
 */
import assert from "node:assert/strict";
import { backup } from "../cli/backup.ts";
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
