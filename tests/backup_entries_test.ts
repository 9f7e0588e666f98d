/**
 * Restore takes only entries the layout writes (cli/backup_entries.ts): a backup of a real store,
 * with one line edited as a hand-made file could have it, is refused whole with that line named,
 * where it was restored and left a key no revocation found (a `key_id` entry holding `[1,2]`), a
 * key answered 503 on every call (a `key_hash` entry holding a string), or an account listed
 * twice (probe HD). Real KV files, the backup and restore the CLI runs.
 */
import assert from "node:assert/strict";
import { backup, restore } from "../cli/backup.ts";
import { KEY_PARTS } from "../cli/backup_entries.ts";
import { KV } from "../metering/kv_layout.ts";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";

type Line = { key: Record<string, unknown>[]; value: { t: string; v: unknown } };

/** A real store's backup (one account, one key), as its header and parsed lines. */
async function realBackup(dir: string) {
  const kv = await Deno.openKv(`${dir}/source.kv`);
  try {
    const accounts = new Accounts(kv, builtinPlans(), systemClock);
    const account = await accounts.create("entries@example.com", "starter");
    const { key } = await accounts.createKey(account.id);
    await backup(kv, `${dir}/backup.jsonl`);
    const [header, ...lines] = (await Deno.readTextFile(`${dir}/backup.jsonl`)).trimEnd()
      .split("\n");
    return {
      accountId: account.id,
      keyId: key.id,
      header: JSON.parse(header),
      lines: lines.map((l) => JSON.parse(l) as Line),
    };
  } finally {
    kv.close();
  }
}

const prefixOf = (l: Line) => l.key[0].s;

Deno.test("restore refuses, naming the line, an index entry or an account filed otherwise than the layout writes them; the store stays empty", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const real = await realBackup(dir);
    const at = (prefix: string) => real.lines.findIndex((l) => prefixOf(l) === prefix);
    for (const prefix of ["account", "key_id", "key_hash", "account_email"]) {
      assert.ok(at(prefix) >= 0, `the real backup has a ${prefix} entry`);
    }
    const edits: [string, (lines: Line[]) => void, RegExp][] = [
      ["key_id holding a list", (ls) => (ls[at("key_id")].value.v = [1, 2]), /key index: /],
      ["key_hash holding a string", (ls) => (ls[at("key_hash")].value.v = "x"), /key digest/],
      [
        "account_email holding an object",
        (ls) => (ls[at("account_email")].value.v = { a: 1 }),
        /address index/,
      ],
      [
        "an account key of three parts",
        (ls) => ls[at("account")].key.push({ s: "x" }),
        /an? account key has 2 parts, not 3/,
      ],
      [
        "an account key whose id is a number",
        (ls) => (ls[at("account")].key[1] = { n: 1 }),
        /account key's part 2 must be a string/,
      ],
      [
        "an account record under another id",
        (ls) => (ls[at("account")].key[1] = { s: "__proto__" }),
        /account record: id is not the key's, __proto__/,
      ],
      // In place of the address line, so that the header's count still holds.
      ["a watch schedule entry holding no id", (ls) => (ls[at("account_email")] = {
        key: [{ s: "watch_due" }, { n: 0 }, { s: "wat_junk" }],
        value: { t: "json", v: { x: 1 } },
      }), /schedule entry: /],
      ["an event schedule entry holding a number", (ls) => (ls[at("account_email")] = {
        key: [{ s: "webhook_due_of" }, { s: real.accountId }, { n: 0 }, { s: "evt_junk" }],
        value: { t: "json", v: 5 },
      }), /schedule entry: /],
      ["the mark of a restore that did not finish", (ls) => (ls[at("account_email")] = {
        key: [{ s: "restore_unfinished" }],
        value: {
          t: "json",
          v: { file: "x.jsonl", entries: 9, started_at: "2026-11-27T00:00:00Z" },
        },
      }), /restore that did not finish/],
      ["a watch count below zero", (ls) => (ls[at("account_email")] = {
        key: [{ s: "watch_count" }, { s: real.accountId }],
        value: { t: "json", v: -1000 },
      }), /watch count: /],
      // Well formed, one by one; only the file as a whole shows them wrong (probe HF).
      [
        "a key index entry naming another account",
        (
          ls,
        ) => ((ls[at("key_id")].value.v as { account_id: string }).account_id = "acc_someone_else"),
        /account record: keys\.key_\w+: its key index entry names account acc_someone_else/,
      ],
      [
        "a key without its key index entry",
        (ls) => (ls[at("key_id")] = { key: [{ s: "junk" }, { n: 1 }], value: { t: "json", v: 1 } }),
        /account record: keys\.key_\w+ has no key index entry/,
      ],
      // A key's digest entry must lead to that key and its account (probe HL: two swapped, each
      // key charged the other's account).
      [
        "a key digest entry naming another account",
        (ls) => ((ls[at("key_hash")].value.v as { account_id: string }).account_id = "acc_other"),
        /key digest entry: names account acc_other, but key key_\w+ is account acc_\w+'s/,
      ],
      [
        "a key digest entry naming another key",
        (ls) => ((ls[at("key_hash")].value.v as { key_id: string }).key_id = "key_other"),
        /account record: keys\.key_\w+ has no key digest entry/,
      ],
      [
        "a key digest entry filed under another digest",
        (ls) => (ls[at("key_hash")].key[1] = { s: "0".repeat(64) }),
        /key digest entry: key key_\w+'s index entry holds another digest/,
      ],
      ["a key of the record filed under another id", (ls) => {
        const keys = (ls[at("account")].value.v as { keys: Record<string, unknown> }).keys;
        keys.key_other = keys[real.keyId];
        delete keys[real.keyId];
      }, /account record: keys\.key_other: id is not key_other/],
    ];
    for (const [name, edit, pattern] of edits) {
      const lines: Line[] = structuredClone(real.lines);
      edit(lines);
      const file = `${dir}/edited.jsonl`;
      await Deno.writeTextFile(
        file,
        [JSON.stringify(real.header), ...lines.map((l) => JSON.stringify(l))].join("\n") + "\n",
      );
      const target = await Deno.openKv(`${dir}/${crypto.randomUUID()}.kv`);
      try {
        await assert.rejects(restore(target, file), (e: Error) => {
          assert.match(e.message, /^Cannot restore: .* line \d+: /, name);
          assert.match(e.message, pattern, name);
          return true;
        });
        assert.equal((await Array.fromAsync(target.list({ prefix: [] }))).length, 0, name);
      } finally {
        target.close();
      }
    }
    // Unedited, the same file restores, and the key is found by its id as revocation finds it.
    const target = await Deno.openKv(`${dir}/whole.kv`);
    try {
      assert.equal(await restore(target, `${dir}/backup.jsonl`), real.lines.length);
      const accounts = new Accounts(target, builtinPlans(), systemClock);
      assert.equal((await accounts.revokeKey(real.keyId)).status, "revoked");
    } finally {
      target.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every prefix the layout writes is known to restore, with its number of key parts", () => {
  // Each of KV's key builders, called with as many arguments as it takes: a prefix added to the
  // layout without a line in backup_entries.ts would be restored unchecked.
  const builders = Object.entries(KV).filter(([, v]) => typeof v === "function") as [
    string,
    (...a: unknown[]) => Deno.KvKey,
  ][];
  assert.ok(builders.length >= 30, `${builders.length} key builders`);
  for (const [name, build] of builders) {
    const key = build(...Array.from({ length: build.length }, () => ""));
    const prefix = key[0] as string;
    const parts = KEY_PARTS[prefix];
    // The prefix-only builders (a listing's prefix) are shorter than the entries they list.
    if (!parts) assert.fail(`KV.${name}: prefix ${prefix} unknown to restore`);
    assert.ok(key.length <= parts.length + 1, `KV.${name}: ${key.length} parts`);
  }
});
