import assert from "node:assert/strict";
import { KEY_PATTERN } from "../metering/api_key.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { DatabaseSync } from "node:sqlite";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { adminTask, withStore } from "./admin_calls.ts";

async function admin(kvPath: string, ...args: string[]) {
  const { code, stdout, stderr } = await adminTask(kvPath, ...args);
  return { code, json: stdout.trim() ? JSON.parse(stdout) : null, stderr };
}

Deno.test("deno task admin: create, show, set, key create/list/revoke on the same store", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const created = await admin(kvPath, "account", "create", "--email", "cli@example.com");
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json.account.plan, "free");
    assert.match(created.json.key.key, KEY_PATTERN);
    const id = created.json.account.id;

    const refused = await admin(kvPath, "key", "create", id, "--mode", "test");
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /key_limit_reached/);

    const set = await admin(
      kvPath,
      "account",
      "set",
      id,
      "--plan",
      "starter",
      "--status",
      "active",
    );
    assert.equal(set.json.plan, "starter");
    assert.equal(set.json.usage.included_requests, 5000);

    const second = await admin(kvPath, "key", "create", id, "--mode", "test");
    assert.equal(second.code, 0);
    assert.match(second.json.key, /^shelf_test_/);

    const list = await admin(kvPath, "key", "list", id);
    assert.equal(list.json.keys.length, 2);
    assert.ok(!JSON.stringify(list.json).includes(second.json.key));

    const revoked = await admin(kvPath, "key", "revoke", second.json.id);
    assert.equal(revoked.json.status, "revoked");
    const shown = await admin(kvPath, "account", "show", id);
    assert.equal(shown.json.usage.requests_used, 0);

    const usage = await admin(kvPath, "frobnicate");
    assert.notEqual(usage.code, 0);
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("deno task admin: a key whose value cannot be printed is revoked, and the error says what to do", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    // stdout is /dev/full: the account is made, its key's value cannot be shown (probe DG).
    const out = await new Deno.Command("sh", {
      args: [
        "-c",
        `"$0" task -q admin account create --email full@example.com > /dev/full`,
        Deno.execPath(),
      ],
      env: { KV_PATH: kvPath, NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    const m =
      /key (key_[0-9a-f]+) was revoked, its value unseen; account (acc_[0-9a-f]+) exists: create another with deno task admin key create \2/
        .exec(stderr);
    assert.ok(m, stderr);
    const keys = await admin(kvPath, "key", "list", m[2]);
    assert.deepEqual(keys.json.keys.map((k: { id: string; status: string }) => [k.id, k.status]), [
      [m[1], "revoked"],
    ]);
    const again = await admin(kvPath, "key", "create", m[2]);
    assert.equal(again.code, 0, "the free plan's one key can be made anew");
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("deno task admin: a key printed into a pipe whose reader has gone is revoked too (probe FW)", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const made = await admin(kvPath, "account", "create", "--email", "pipe@example.com");
    const account = made.json.account.id as string;
    const keyId = made.json.key.id as string;
    await admin(kvPath, "key", "revoke", keyId);
    // The reader closes its end at once; the CLI writes a second later. console.log dropped the
    // write without a word, and the key stayed active, unseen.
    const out = await new Deno.Command("sh", {
      args: ["-c", `"$0" task -q admin key create ${account} | (exec 0<&-; true)`, Deno.execPath()],
      env: { KV_PATH: kvPath, NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    const m = /key (key_[0-9a-f]+) was revoked, its value unseen/.exec(stderr);
    assert.ok(m, stderr);
    const keys = await admin(kvPath, "key", "list", account);
    assert.ok(
      keys.json.keys.every((k: { status: string }) => k.status === "revoked"),
      JSON.stringify(keys.json),
    );
  } finally {
    await removeKvFiles(kvPath);
  }
});

/**
 * `account create` run with its stdout a blocking pipe that is already full (64 KiB written
 * before it), read only after `readAfterMs`; stderr goes into the same pipe or to a file.
 */
async function intoFullPipe(
  kvPath: string,
  email: string,
  o: { same: boolean; readAfterMs: number },
) {
  const dir = await Deno.makeTempDir();
  const stderr = o.same ? "2>&1" : `2> "${dir}/err"`;
  const script = `{ head -c 65536 /dev/zero; sh -c 'echo $$ > "${dir}/pid"; exec "$0" run ` +
    `--allow-env --allow-read --allow-write --allow-net cli/admin.ts account create ` +
    `--email ${email}' "$0" ${stderr}; } | { sleep ${o.readAfterMs / 1000}; cat > "${dir}/out"; }`;
  const child = new Deno.Command("sh", {
    args: ["-c", script, Deno.execPath()],
    env: { KV_PATH: kvPath, NO_COLOR: "1" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  let pid = 0;
  let account = "";
  // The CLI has made the account and its key, and is writing them into the full pipe.
  for (let i = 0; i < 300 && !account; i++) {
    await new Promise((r) => setTimeout(r, 100));
    pid ||= Number(await Deno.readTextFile(`${dir}/pid`).catch(() => "0"));
    account = (await admin(kvPath, "account", "list", "--email", email)).json?.accounts?.[0]?.id ??
      "";
  }
  assert.ok(pid && account, "the CLI made the account");
  await new Promise((r) => setTimeout(r, 500));
  const started = Date.now();
  return {
    pid,
    account,
    /** When the CLI's process ended, in ms from its first write's wait. */
    exited: (async () => {
      while (Deno.readTextFileSync(`/proc/${pid}/stat`).split(" ")[2] !== "Z") {
        await new Promise((r) => setTimeout(r, 50));
        try {
          Deno.statSync(`/proc/${pid}`);
        } catch {
          break;
        }
      }
      return Date.now() - started;
    })().catch(() => Date.now() - started),
    async output() {
      await child.status;
      const read = (name: string) => Deno.readTextFile(`${dir}/${name}`).catch(() => "");
      const out = { out: (await read("out")).replace(/^\0+/, ""), err: await read("err") };
      await Deno.remove(dir, { recursive: true });
      return out;
    },
  };
}

async function keyStatuses(kvPath: string, account: string): Promise<string[]> {
  const keys = await admin(kvPath, "key", "list", account);
  return keys.json.keys.map((k: { status: string }) => k.status);
}

/** The new key was revoked, and `said` tells the operator so, naming the account. */
async function revokedAndSaid(kvPath: string, account: string, said: string): Promise<void> {
  assert.match(said, new RegExp(`was revoked, its value unseen; account ${account} exists`));
  assert.deepEqual(await keyStatuses(kvPath, account), ["revoked"]);
}

/** The KV file locked by another program (a SQLite transaction) until the returned release. */
function holdStore(kvPath: string): () => void {
  const lock = new DatabaseSync(kvPath);
  lock.exec("BEGIN EXCLUSIVE");
  return () => {
    lock.exec("ROLLBACK");
    lock.close();
  };
}

Deno.test("admin CLI: a signal while a full blocking pipe holds the new key's value ends the wait, revokes the key and says so (probe GC)", () =>
  withStore(async (kvPath) => {
    const run = await intoFullPipe(kvPath, "blocked@example.com", {
      same: false,
      readAfterMs: 8_000,
    });
    Deno.kill(run.pid, "SIGTERM");
    // A blocking write held the only thread: the signal waited for the reader, 8 s on.
    assert.ok(await run.exited < 6_000, "the CLI ended before the reader read");
    await revokedAndSaid(kvPath, run.account, (await run.output()).err);
  }));

Deno.test("admin CLI: under 2>&1, what became of the key waits for the reader after the signal that ended the wait for stdout (probe GC)", () =>
  withStore(async (kvPath) => {
    const run = await intoFullPipe(kvPath, "same@example.com", { same: true, readAfterMs: 4_000 });
    Deno.kill(run.pid, "SIGINT");
    await revokedAndSaid(kvPath, run.account, (await run.output()).out);
  }));

Deno.test("admin CLI: the revoke of an unseen key outlasts a store another program holds for a few seconds (probe GC)", () =>
  withStore(async (kvPath) => {
    const run = await intoFullPipe(kvPath, "held@example.com", {
      same: false,
      readAfterMs: 12_000,
    });
    const release = holdStore(kvPath);
    Deno.kill(run.pid, "SIGTERM");
    await new Promise((r) => setTimeout(r, 5_000));
    release();
    // Given up after two seconds, the revoke left the key active and named it to revoke by hand.
    await revokedAndSaid(kvPath, run.account, (await run.output()).err);
  }));

Deno.test("admin CLI: a key the held store will not revoke is named, and the CLI exits while the store is still held (probe GC)", () =>
  withStore(async (kvPath) => {
    const run = await intoFullPipe(kvPath, "kept@example.com", {
      same: false,
      readAfterMs: 25_000,
    });
    const release = holdStore(kvPath);
    try {
      Deno.kill(run.pid, "SIGTERM");
      assert.ok(await run.exited < 23_000, "the CLI ended with the store held");
    } finally {
      release();
    }
    const { err } = await run.output();
    const m =
      /could not be revoked \(.*\): revoke it with deno task admin key revoke (key_[0-9a-f]+)/
        .exec(err);
    assert.ok(m, err);
    assert.deepEqual(await keyStatuses(kvPath, run.account), ["active"]);
    assert.equal((await admin(kvPath, "key", "revoke", m[1])).code, 0);
  }));

Deno.test("admin CLI: a long account list on a non-blocking stdout that fills comes out whole and once, also under 2>&1 (probe GF)", () =>
  withStore(async (kvPath) => {
    const kv = await Deno.openKv(kvPath);
    const accounts = new Accounts(kv, builtinPlans(), systemClock);
    for (let i = 0; i < 100; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => accounts.create(`many${i + j}@example.com`, "free")),
      );
    }
    kv.close();
    const dir = await Deno.makeTempDir();
    try {
      for (const stderr of [`2> "${dir}/err"`, "2>&1"]) {
        // About 27 KB into a 4 KiB pipe read a second later: writes are cut short, then refused.
        const script =
          `"$0" run -A tests/nonblocking_stdout.ts "$0" run --allow-env --allow-read ` +
          `--allow-write --allow-net cli/admin.ts account list ${stderr} | { sleep 1; cat > "${dir}/out"; }`;
        const run = await new Deno.Command("sh", {
          args: ["-c", script, Deno.execPath()],
          env: { KV_PATH: kvPath, NO_COLOR: "1" },
        }).output();
        assert.equal(run.code, 0, stderr);
        const out = await Deno.readTextFile(`${dir}/out`);
        // The runtime's line buffer wrote a cut write's tail again with every retry: megabytes.
        assert.ok(out.length < 40_000, `${out.length} characters (${stderr})`);
        assert.equal(JSON.parse(out).accounts.length, 100, stderr);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }));

Deno.test("admin CLI: waiting past a second for a full pipe, the waiting note goes to a stderr of its own, never into the JSON under 2>&1 (probe GT, O05)", () =>
  withStore(async (kvPath) => {
    const kv = await Deno.openKv(kvPath);
    const accounts = new Accounts(kv, builtinPlans(), systemClock);
    await Promise.all([1, 2, 3].map((i) => accounts.create(`note${i}@example.com`, "free")));
    kv.close();
    const dir = await Deno.makeTempDir();
    try {
      // A blocking pipe already full (64 KiB written before it), read 2.5 s later: the CLI waits
      // past the note's second, and the note, written to a blocking stream, would land as soon as
      // the reader reads. Both runs at once: stderr apart (the note is given), and 2>&1.
      const run = (name: string, stderr: string) => {
        const script = `{ head -c 65536 /dev/zero; "$0" run --allow-env --allow-read ` +
          `--allow-write --allow-net cli/admin.ts account list ${stderr}; } | ` +
          `{ sleep 2.5; cat > "${dir}/${name}"; }`;
        return new Deno.Command("sh", {
          args: ["-c", script, Deno.execPath()],
          env: { KV_PATH: kvPath, NO_COLOR: "1" },
          stdout: "null",
          stderr: "null",
        }).output();
      };
      const runs = await Promise.all([run("apart", `2> "${dir}/err"`), run("same", "2>&1")]);
      assert.deepEqual(runs.map((r) => r.code), [0, 0]);
      const read = async (name: string) =>
        (await Deno.readTextFile(`${dir}/${name}`)).replace(/^\0+/, "");
      // Apart, the operator is told the CLI waits (so both runs did wait past the note's time).
      assert.match(await read("err"), /admin: waiting for stdout's reader/);
      assert.equal(JSON.parse(await read("apart")).accounts.length, 3);
      // Under 2>&1 the note would be inside the JSON: it is not given, and the JSON reads whole.
      const same = await read("same");
      assert.doesNotMatch(same, /waiting for stdout's reader/);
      assert.equal(JSON.parse(same).accounts.length, 3);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }));

Deno.test("deno task admin: account set --status with an empty or unknown status is refused, the account unchanged", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const kv = await Deno.openKv(kvPath);
    let id: string;
    try {
      id = (await new Accounts(kv, builtinPlans(), systemClock).create("st@example.com")).id;
    } finally {
      kv.close();
    }
    for (const status of ["", "suspended"]) {
      const set = await admin(kvPath, "account", "set", id, "--status", status);
      assert.equal(set.code, 1, JSON.stringify(status));
      assert.match(set.stderr, /invalid_status/, JSON.stringify(status));
      assert.equal(set.json, null, "nothing printed as done");
    }
    const shown = await admin(kvPath, "account", "show", id);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.status, "active");
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("deno task admin: account set --plan to a plan with fewer keys lists the keys it revoked in revoked_keys", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const created = await admin(
      kvPath,
      "account",
      "create",
      "--email",
      "down@example.com",
      "--plan",
      "starter",
    );
    assert.equal(created.code, 0, created.stderr);
    const id = created.json.account.id;
    const ids = [created.json.key.id];
    for (let i = 0; i < 2; i++) {
      const k = await admin(kvPath, "key", "create", id, "--mode", "test");
      assert.equal(k.code, 0, k.stderr);
      ids.push(k.json.id);
    }
    const set = await admin(kvPath, "account", "set", id, "--plan", "free");
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.json.plan, "free");
    const revoked: string[] = set.json.revoked_keys;
    assert.ok(Array.isArray(revoked), JSON.stringify(set.json));
    assert.equal(revoked.length, 2, "free keeps one key of three");
    for (const k of revoked) assert.ok(ids.includes(k), k);
    const list = await admin(kvPath, "key", "list", id);
    const active = list.json.keys.filter((k: { status: string }) => k.status === "active");
    assert.equal(active.length, 1);
    assert.ok(!revoked.includes(active[0].id), "the key kept is not listed as revoked");
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("deno task admin: C1 control characters (U+0080-U+009F) in an argument reach the terminal escaped", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const hostile = "acc_\u009b2J\u009d0;owned\u0085";
    for (const args of [["account", "show", hostile], [`bogus${hostile}`]]) {
      const r = await admin(kvPath, ...args);
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.stderr, /[\u0080-\u009f]/, JSON.stringify(r.stderr));
      assert.match(r.stderr, /acc_\\x9b2J\\x9d0;owned\\x85/);
    }
  } finally {
    await removeKvFiles(kvPath);
  }
});
