/**
 * Operator CLI on the same store as the server (INTERFACE.md "Administration" and "Operations").
 * Every command prints JSON on stdout; `--help` prints a command's usage; a refused command
 * prints one line on stderr and exits 1.
 */
import { escapeControls } from "../core/escape_controls.ts";
import { parseArgs } from "node:util";
import { loadConfig, localKvFile, openStore } from "../config.ts";
import { AccountError, Accounts, keyOptions } from "../metering/accounts.ts";
import { accountView, keyView, usageRecord } from "../metering/account_state.ts";
import { systemClock } from "../metering/clock.ts";
import type { Plans } from "../metering/plans.ts";
import { createdKeyView } from "../routes/admin.ts";
import { backup, restore } from "./backup.ts";
import { operatorResetLink } from "../metering/password_reset.ts";
import { HeldSignals, printErr, printOut } from "./output.ts";
import { holdsNothing } from "../metering/store_layout.ts";
import { folderOf, pathExists, removeKvFiles } from "../core/kv_files.ts";

const COMMANDS: Record<string, { usage: string; about: string }> = {
  "account create": {
    usage: "account create --email E [--plan P]",
    about: "creates an account and its first key (shown once)",
  },
  "account list": {
    usage: "account list [--email E] [--cursor C]",
    about: "accounts in pages of 100; next_cursor fetches the next page",
  },
  "account show": { usage: "account show ACCOUNT_ID", about: "the account with its usage record" },
  "account set": {
    usage: "account set ACCOUNT_ID [--plan P] [--status active|inactive]",
    about:
      "changes plan or status; a plan with fewer keys revokes the oldest (listed in revoked_keys)",
  },
  "account reset-link": {
    usage: "account reset-link ACCOUNT_ID",
    about: "a one-hour link for the owner to choose a dashboard password (no mail needed)",
  },
  "key create": {
    usage: "key create ACCOUNT_ID [--mode live|test] [--name N]",
    about: "creates a key; its value is printed once",
  },
  "key list": {
    usage: "key list ACCOUNT_ID",
    about: "the account's keys without values, revoked ones included",
  },
  "key revoke": { usage: "key revoke KEY_ID", about: "revokes a key; its next call gets 401" },
  "backup": {
    usage: "backup FILE [--force]",
    about: "writes a consistent JSON Lines snapshot to a new FILE (--force: replace one)",
  },
  "restore": {
    usage: "restore FILE",
    about: "loads a snapshot into an empty store (refuses a non-empty one)",
  },
};

/** A command line the CLI cannot run: printed as one line, exit code 1. */
export class UsageError extends Error {}

export function help(command?: string): string {
  const entry = command && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (entry) return `usage: deno task admin ${entry.usage}\n  ${entry.about}`;
  return ["usage: deno task admin COMMAND [options]   (KV_PATH names the store)", ""]
    .concat(Object.values(COMMANDS).map((c) => `  ${c.usage.padEnd(62)} ${c.about}`))
    .concat(["", "Add --help to any command for its usage."]).join("\n");
}

function commandOf(positionals: string[]): { name: string; rest: string[] } {
  const one = positionals[0] ?? "";
  if (Object.hasOwn(COMMANDS, one)) return { name: one, rest: positionals.slice(1) };
  const two = positionals.slice(0, 2).join(" ");
  return { name: two, rest: positionals.slice(2) };
}

export async function runAdmin(
  args: string[],
  kv: Deno.Kv,
  accounts: Accounts,
  plans: Plans,
  kvPath?: string,
  publicUrl = "http://localhost:8000",
): Promise<unknown> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        email: { type: "string" },
        plan: { type: "string" },
        status: { type: "string" },
        mode: { type: "string" },
        name: { type: "string" },
        cursor: { type: "string" },
        force: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message.split("\n")[0]);
  }
  const { values, positionals } = parsed;
  const { name, rest } = commandOf(positionals);
  const [id] = rest;
  const required = (what: string) => {
    if (!id) {
      throw new UsageError(`${what} is required: usage: deno task admin ${COMMANDS[name].usage}`);
    }
    return id;
  };
  const withUsage = (a: Awaited<ReturnType<Accounts["get"]>>) => ({
    ...accountView(a),
    usage: usageRecord(a, plans.get(a.plan)),
  });
  switch (name) {
    case "account create": {
      if (!values.email) {
        throw new UsageError(`--email is required: usage: deno task admin ${COMMANDS[name].usage}`);
      }
      const options = { mode: values.mode, name: values.name ?? "default" };
      keyOptions(options); // refused before the account exists, not after
      const a = await accounts.create(values.email, values.plan ?? "free");
      const { key, value } = await accounts.createKey(a.id, options);
      return { account: accountView(a), key: createdKeyView(key, value) };
    }
    case "account list": {
      const page = await accounts.list({ email: values.email, cursor: values.cursor });
      return { accounts: page.accounts.map(accountView), next_cursor: page.next_cursor };
    }
    case "account show":
      return withUsage(await accounts.get(required("ACCOUNT_ID")));
    case "account set": {
      const a = await accounts.update(required("ACCOUNT_ID"), {
        plan: values.plan,
        status: values.status,
      });
      return { ...withUsage(a), revoked_keys: a.revoked };
    }
    case "account reset-link": {
      const a = await accounts.get(required("ACCOUNT_ID"));
      return await operatorResetLink(kv, a, publicUrl, Date.now());
    }
    case "key create": {
      const { key, value } = await accounts.createKey(required("ACCOUNT_ID"), {
        mode: values.mode,
        name: values.name,
      });
      return createdKeyView(key, value);
    }
    case "key list":
      return { keys: (await accounts.listKeys(required("ACCOUNT_ID"))).map(keyView) };
    case "key revoke":
      return keyView(await accounts.revokeKey(required("KEY_ID")));
    case "backup":
      return {
        file: required("FILE"),
        entries: await backup(kv, required("FILE"), {
          kvFile: localKvFile(kvPath),
          force: values.force,
        }),
      };
    case "restore":
      return { file: required("FILE"), entries: await restore(kv, required("FILE")) };
    default:
      throw new UsageError(
        `unknown command '${positionals.join(" ")}'; deno task admin --help lists the commands`,
      );
  }
}

/**
 * A created key whose value could not be printed (stdout full or closed) is revoked: nobody has
 * seen it, and `account create` exited 1 with the account and a working key made, so that running
 * it again was refused as `email_taken` (probe DG). What to do next goes with the error.
 */
async function unshownKey(
  accounts: Accounts,
  out: unknown,
  e: unknown,
  held: HeldSignals,
): Promise<Error> {
  const why = e instanceof Error ? e.message : String(e);
  // `account create` answers {account, key: {id, key, …}}, `key create` the key itself.
  const o = out as { account?: { id: string }; key?: unknown; id?: unknown };
  const keyId = typeof o?.key === "string" ? o.id : (o?.key as { id?: unknown } | undefined)?.id;
  if (typeof keyId !== "string") {
    return new Error(`the command was done, but its output could not be written: ${why}`);
  }
  try {
    await revokeSurely(accounts, keyId, held);
  } catch (failed) {
    // A store another process holds may refuse the revoke: the key is then named, to revoke by hand.
    const reason = failed instanceof Error ? failed.message : String(failed);
    return new Error(
      `the output could not be written (${why}), and key ${keyId}, its value unseen, could not be revoked (${reason}): revoke it with deno task admin key revoke ${keyId}`,
    );
  }
  const account = o.account ? `account ${o.account.id} exists: ` : "";
  return new Error(
    `the output could not be written (${why}): key ${keyId} was revoked, its value unseen; ${account}create another with deno task admin key create ${
      o.account?.id ?? "ACCOUNT_ID"
    }`,
  );
}

/**
 * A store another process holds gives up a write in about two seconds (transact.ts); the revoke of
 * an unseen key is tried again for REVOKE_MS, or until a further signal (probe GC: with the store
 * held, the key stayed active).
 */
async function revokeSurely(accounts: Accounts, keyId: string, held: HeldSignals): Promise<void> {
  const until = Date.now() + REVOKE_MS;
  const signals = held.count;
  for (;;) {
    try {
      await accounts.revokeKey(keyId);
      return;
    } catch (e) {
      if (e instanceof AccountError || Date.now() > until || held.count > signals) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
const REVOKE_MS = 15_000;

if (import.meta.main) {
  const args = Deno.args;
  const { name } = commandOf(args.filter((a) => !a.startsWith("-")));
  if (args.includes("--help") || args.includes("-h") || args.length === 0) {
    console.log(help(name));
    Deno.exit(0);
  }
  let held: HeldSignals | undefined;
  /** A store file this command created and nothing was written to, and its folder if new. */
  let created: { file: string; dir: string | null; kv: Deno.Kv } | null = null;
  try {
    const config = loadConfig();
    // Every command would act on a store that ends with it (probe HK: a restore "restored" 57
    // entries into nothing, a backup of it was empty).
    if (config.kvPath === ":memory:") {
      throw new Error(
        "KV_PATH=:memory: is a store of this command alone: give the admin CLI the service's KV_PATH",
      );
    }
    const file = localKvFile(config.kvPath);
    const dir = file ? folderOf(file) || null : null;
    const newDir = dir !== null && !(await pathExists(dir));
    const newFile = file !== undefined && !(await pathExists(file));
    // A store that holds nothing yet stays unmarked (metering/store_layout.ts).
    const kv = await openStore(config.kvPath, undefined, undefined, false);
    if (file && newFile) created = { file, dir: newDir ? dir : null, kv };
    const accounts = new Accounts(kv, config.plans, systemClock);
    const out = await runAdmin(args, kv, accounts, config.plans, config.kvPath, config.publicUrl);
    // From here a signal ends only a wait for stdout's reader (cli/output.ts).
    held = new HeldSignals();
    try {
      await printOut(`${JSON.stringify(out, null, 2)}\n`, held);
    } catch (e) {
      throw await unshownKey(accounts, out, e, held);
    }
    if (args.includes("reset-link") && !Deno.env.get("PUBLIC_URL")) {
      await printErr(
        `admin: PUBLIC_URL is not set: the link names ${config.publicUrl}; run the CLI with the service's settings`,
        held,
      );
    }
  } catch (e) {
    const code = e instanceof AccountError ? `${e.code}: ` : "";
    const message = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    await printErr(`admin: ${code}${escapeControls(message)}`, held);
    Deno.exitCode = 1;
    // A command refused before it wrote anything (a mistyped backup's name, a garbage file) leaves
    // no store where there was none: a restore left an empty one, as root with mode 0600 in a
    // new 0700 folder, at ./data/shelf.kv when KV_PATH was not set (probe HP).
    if (created && await holdsNothing(created.kv).catch(() => false)) {
      await removeKvFiles(created.file);
      if (created.dir) await Deno.remove(created.dir).catch(() => {}); // only if left empty
    }
  }
  // The exit ends what the store still retries, and the store is not closed first: a store another
  // program held locked left the start-up write queued behind the lock, which kept the CLI alive
  // long after it said it could not open the store (probe DR), and a close waited for the revokes
  // that lock refused, after the CLI had said so (probe GC). What was committed is in the file.
  Deno.exit(Deno.exitCode);
}
