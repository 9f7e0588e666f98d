/**
 * The admin CLI as an operator types it (`deno task admin …`, a real process on a real KV file):
 * with no arguments it prints its help; `account create` names the first key `default`; and
 * `account list --cursor` goes on to the next page.
 */
import assert from "node:assert/strict";
import { adminTask, withStore } from "./admin_calls.ts";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";

Deno.test("deno task admin with no arguments prints the general help, as --help does, and exits 0 without opening a store", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A store path nothing exists at yet: printing the help must not make one.
    const kvPath = `${dir}/none/shelf.kv`;
    const bare = await adminTask(kvPath);
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(bare.stderr, "");
    assert.match(bare.stdout, /^usage: deno task admin COMMAND/);
    for (const cmd of ["account create", "account list", "key revoke", "backup", "restore"]) {
      assert.ok(bare.stdout.includes(cmd), cmd);
    }
    const help = await adminTask(kvPath, "--help");
    assert.equal(help.code, 0, help.stderr);
    assert.equal(bare.stdout, help.stdout);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "no store, no folder");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task admin account create names the first key 'default' unless --name is given; key create without a name leaves it empty", () =>
  withStore(async (kvPath) => {
    // README: the CLI's first key is `default`, any other key made without a name is "".
    const made = await adminTask(
      kvPath,
      "account",
      "create",
      "--email",
      "n@example.com",
      "--plan",
      "starter",
    );
    assert.equal(made.code, 0, made.stderr);
    const created = JSON.parse(made.stdout);
    assert.equal(created.key.name, "default");
    const id = created.account.id as string;

    const named = JSON.parse(
      (await adminTask(kvPath, "account", "create", "--email", "m@example.com", "--name", "ci"))
        .stdout,
    );
    assert.equal(named.key.name, "ci");

    const other = await adminTask(kvPath, "key", "create", id);
    assert.equal(other.code, 0, other.stderr);
    assert.equal(JSON.parse(other.stdout).name, "");

    // The name is the stored one, not only the one printed.
    const listed = JSON.parse((await adminTask(kvPath, "key", "list", id)).stdout);
    assert.deepEqual(
      listed.keys.map((k: { id: string; name: string }) => [k.id, k.name]).sort(),
      [[created.key.id, "default"], [JSON.parse(other.stdout).id, ""]].sort(),
    );
  }));

Deno.test("deno task admin account list --cursor gives the page after the one that named the cursor, to the last", () =>
  withStore(async (kvPath) => {
    // 101 accounts, one past a page, made in this process rather than by 101 CLI runs.
    const kv = await Deno.openKv(kvPath);
    const ids = new Set<string>();
    try {
      const accounts = new Accounts(kv, builtinPlans(), systemClock);
      for (let i = 0; i < 101; i++) ids.add((await accounts.create(`page${i}@example.com`)).id);
    } finally {
      kv.close();
    }
    const first = await adminTask(kvPath, "account", "list");
    assert.equal(first.code, 0, first.stderr);
    const one = JSON.parse(first.stdout);
    assert.equal(one.accounts.length, 100);
    assert.equal(typeof one.next_cursor, "string");

    const second = await adminTask(kvPath, "account", "list", "--cursor", one.next_cursor);
    assert.equal(second.code, 0, second.stderr);
    const two = JSON.parse(second.stdout);
    assert.equal(two.accounts.length, 1);
    assert.equal(two.next_cursor, null, "the last page names no further one");

    const seen = [...one.accounts, ...two.accounts].map((a: { id: string }) => a.id);
    assert.equal(new Set(seen).size, 101, "no account twice");
    assert.deepEqual(new Set(seen), ids, "every account once");
  }));
