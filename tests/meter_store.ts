/**
 * The account store as the metering tests use it below the HTTP layer: a real KV file with the
 * accounts and the meter over it, and an account record edited in place as an earlier version,
 * or a state no call reaches quickly, would have left it.
 */
import assert from "node:assert/strict";
import { Accounts } from "../metering/accounts.ts";
import { Meter } from "../metering/meter.ts";
import { builtinPlans } from "../metering/plans.ts";
import type { Clock } from "../metering/clock.ts";
import type { AccountState } from "../metering/account_state.ts";
import { KV } from "../metering/kv_layout.ts";
import { removeKvFiles } from "../core/kv_files.ts";

/** A new KV file holding one account of `plan` with one key; removed on dispose. */
export async function meterStore(clock: Clock, plan = "growth") {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  const plans = builtinPlans();
  const accounts = new Accounts(kv, plans, clock);
  const meter = new Meter(kv, plans, clock);
  const a = await accounts.create(`p${crypto.randomUUID()}@example.com`, plan);
  const { key } = await accounts.createKey(a.id);
  return {
    kv,
    accounts,
    meter,
    id: a.id,
    keyId: key.id,
    [Symbol.asyncDispose]: async () => {
      kv.close();
      await removeKvFiles(path);
    },
  };
}

/** Changes the stored account record in place, in one checked commit. */
export async function editRecord(kv: Deno.Kv, id: string, edit: (a: AccountState) => void) {
  const e = await kv.get<AccountState>(KV.account(id));
  assert.ok(e.value, `no record for ${id}`);
  edit(e.value);
  const ok = await kv.atomic().check(e).set(KV.account(id), e.value).commit();
  assert.ok(ok.ok, "the record was rewritten");
}
