/**
 * Operator CLI on the same store as the server (INTERFACE.md):
 *   account create --email E [--plan P]   account show ID   account set ID [--plan P] [--status S]
 *   key create ACCOUNT_ID [--mode test] [--name N]   key list ACCOUNT_ID   key revoke KEY_ID
 * Each prints JSON; a refused command prints {"error": …} on stderr and exits 1.
 */
import { parseArgs } from "node:util";
import { loadConfig, openStore } from "../config.ts";
import { AccountError, Accounts } from "../metering/accounts.ts";
import { accountView, keyView, usageRecord } from "../metering/account_state.ts";
import { systemClock } from "../metering/clock.ts";
import { createdKeyView } from "../routes/admin.ts";

const USAGE = "usage: admin account create --email E [--plan P] | account show ID | account set ID [--plan P] [--status S]" +
  " | key create ACCOUNT_ID [--mode live|test] [--name N] | key list ACCOUNT_ID | key revoke KEY_ID";

export async function runAdmin(args: string[], accounts: Accounts, plans = loadConfig().plans): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      email: { type: "string" },
      plan: { type: "string" },
      status: { type: "string" },
      mode: { type: "string" },
      name: { type: "string" },
    },
  });
  const [noun, verb, id] = positionals;
  const withUsage = (a: Awaited<ReturnType<Accounts["get"]>>) => ({ ...accountView(a), usage: usageRecord(a, plans.get(a.plan)) });
  switch (`${noun} ${verb}`) {
    case "account create": {
      if (!values.email) throw new AccountError(422, "missing_email", "--email is required");
      const a = await accounts.create(values.email, values.plan ?? "free");
      const { key, value } = await accounts.createKey(a.id, { mode: values.mode, name: values.name ?? "default" });
      return { account: accountView(a), key: createdKeyView(key, value) };
    }
    case "account show":
      return withUsage(await accounts.get(required(id)));
    case "account set": {
      const a = await accounts.update(required(id), { plan: values.plan, status: values.status });
      return { ...withUsage(a), revoked_keys: a.revoked };
    }
    case "key create": {
      const { key, value } = await accounts.createKey(required(id), { mode: values.mode, name: values.name });
      return createdKeyView(key, value);
    }
    case "key list":
      return { keys: (await accounts.listKeys(required(id))).map(keyView) };
    case "key revoke":
      return keyView(await accounts.revokeKey(required(id)));
    default:
      throw new AccountError(2, "usage", USAGE);
  }
}

function required(id: string | undefined): string {
  if (!id) throw new AccountError(2, "usage", USAGE);
  return id;
}

if (import.meta.main) {
  const config = loadConfig();
  const kv = await openStore(config.kvPath);
  try {
    const out = await runAdmin(Deno.args, new Accounts(kv, config.plans, systemClock), config.plans);
    console.log(JSON.stringify(out, null, 2));
  } catch (e) {
    const err = e instanceof AccountError ? { code: e.code, message: e.message } : { code: "error", message: String(e) };
    console.error(JSON.stringify({ error: err }));
    Deno.exitCode = 1;
  } finally {
    kv.close();
  }
}
