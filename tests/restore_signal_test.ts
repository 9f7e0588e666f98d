/**
 * A restore told to stop (Ctrl-C) while it writes ends between two commits and says how far it
 * got and what to do: killed by the signal, it left a partly written store without a word, some
 * of whose keys worked and could not be revoked (probe HE). A restore stopped any way at all (a
 * SIGKILL too) leaves its store marked unfinished, which the server will not start on and no
 * admin command will use. The real CLI and server on a real KV file.
 */
import assert from "node:assert/strict";
import { ADMIN, ROOT } from "./admin_calls.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { runToEnd } from "./proof/shelf_process.ts";
import { KV } from "../metering/kv_layout.ts";
import { backup, restore } from "../cli/backup.ts";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { unfinishedRestore } from "../metering/unfinished_restore.ts";

const ENTRIES = 60_000;

function admin(kvPath: string, ...args: string[]) {
  return new Deno.Command(Deno.execPath(), {
    args: [...ADMIN, ...args],
    cwd: ROOT,
    env: { KV_PATH: kvPath, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  });
}

/** Starts a restore of ENTRIES junk entries and sends `signal` once it has begun writing. */
async function restoreStoppedBy(dir: string, kvPath: string, signal: Deno.Signal) {
  const file = `${dir}/many.jsonl`;
  const junk = (i: number) =>
    JSON.stringify({ key: [{ s: "junk" }, { n: i }], value: { t: "json", v: i } });
  await Deno.writeTextFile(
    file,
    [
      JSON.stringify({ format: "shelf-backup/2", entries: ENTRIES }),
      ...Array.from({ length: ENTRIES }, (_, i) => junk(i)),
    ].join("\n") + "\n",
  );
  const child = admin(kvPath, "restore", file).spawn();
  // Once the writing has begun (the check of the whole file comes first).
  const kv = await Deno.openKv(kvPath);
  try {
    for (let i = 0; i < 600; i++) {
      let any = false;
      for await (const _ of kv.list({ prefix: ["junk"] }, { limit: 1 })) any = true;
      if (any) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    kv.close();
  }
  child.kill(signal);
  const out = await child.output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr), file };
}

async function junkHeld(kvPath: string): Promise<number> {
  const kv = await Deno.openKv(kvPath);
  try {
    return (await Array.fromAsync(kv.list({ prefix: ["junk"] }))).length;
  } finally {
    kv.close();
  }
}

/** The server and two admin commands on the store: each refuses it with one line, exit code 1. */
async function refusedEverywhere(kvPath: string, file: string) {
  const unfinished = /holds a restore of .* started \S+ that did not finish.*restore again/;
  for (const args of [["account", "list"], ["restore", file], ["backup", `${kvPath}.backup`]]) {
    const out = await admin(kvPath, ...args).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, `${args[0]}: ${stderr}`);
    assert.match(stderr, unfinished, args[0]);
  }
  const server = await runToEnd("main.ts", kvPath);
  const stderr = server.stderr;
  assert.equal(server.code, 1, stderr);
  assert.match(
    stderr.trim(),
    new RegExp(`^shelf: Cannot use the store at ${kvPath}: it ${unfinished.source}$`),
  );
  assert.doesNotMatch(server.stdout, /listening/);
}

Deno.test("restore: a SIGINT while it writes stops it between commits, naming how many entries the store holds", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/target.kv`;
  try {
    const { code, stderr, file } = await restoreStoppedBy(dir, kvPath, "SIGINT");
    assert.notEqual(code, 0, stderr);
    const said =
      /stopped by SIGINT after (\d+) of 60000 entries were written; the store holds them and is marked unfinished .*: delete it/
        .exec(stderr);
    assert.ok(said, stderr);
    const written = Number(said[1]);
    assert.ok(written > 0 && written < ENTRIES, `${written} written`);
    // What it says is what the store holds.
    assert.equal(await junkHeld(kvPath), written);
    await refusedEverywhere(kvPath, file);
  } finally {
    await removeKvFiles(kvPath);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("restore: a SIGKILL while it writes leaves the store marked unfinished; a whole restore leaves no mark", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/target.kv`;
  try {
    const { code, file } = await restoreStoppedBy(dir, kvPath, "SIGKILL");
    assert.notEqual(code, 0);
    const written = await junkHeld(kvPath);
    assert.ok(written > 0 && written < ENTRIES, `${written} written`);
    await refusedEverywhere(kvPath, file);
    // The same file restored whole into a new store: nothing marks it, and it is used.
    const fresh = `${dir}/fresh.kv`;
    const restored = await admin(fresh, "restore", file).output();
    assert.equal(restored.code, 0, new TextDecoder().decode(restored.stderr));
    assert.equal(await junkHeld(fresh), ENTRIES);
    const list = await admin(fresh, "account", "list").output();
    assert.equal(list.code, 0, new TextDecoder().decode(list.stderr));
    await removeKvFiles(fresh);
  } finally {
    await removeKvFiles(kvPath);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("restore: a mark whose values no restore wrote is refused all the same, and quoted only as a restore writes them (probe HI)", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/target.kv`;
  try {
    const kv = await Deno.openKv(kvPath);
    await kv.set(KV.restoreUnfinished, {
      file: "a\n".repeat(20_000),
      started_at: "2026-11-27T00:00:00Z\r\x1b[2J\u2028[shelf] forged",
    });
    kv.close();
    const server = await runToEnd("main.ts", kvPath);
    assert.equal(server.code, 1, server.stderr);
    assert.equal(
      server.stderr,
      `shelf: Cannot use the store at ${kvPath}: it holds a restore that did not finish: some ` +
        "entries are missing; delete it (a local file with its -wal and -shm files; a denokv " +
        "server's database; on Deno Deploy, use a new KV database) and restore again\n",
    );
  } finally {
    await removeKvFiles(kvPath);
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs `test` on a new KV file in a folder of its own, both removed after. */
async function inStore(test: (dir: string, kv: Deno.Kv) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/target.kv`);
  try {
    await test(dir, kv);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** A restore of `file` into `kv`, and when it has written its first junk entry. */
function restoreUnderWay(kv: Deno.Kv, file: string) {
  const done = restore(kv, file);
  done.catch(() => {});
  const writing = (async () => {
    for (let i = 0; i < 1_000; i++) {
      const any = await Array.fromAsync(kv.list({ prefix: ["junk"] }, { limit: 1 }));
      if (any.length) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return { done, writing };
}

/** A restore of 20,000 junk entries into `kv`, once it has written the first. */
async function writingJunk(kv: Deno.Kv, dir: string) {
  const file = `${dir}/many.jsonl`;
  await junkBackup(file, 20_000);
  const restoring = restoreUnderWay(kv, file);
  await restoring.writing;
  return { file, done: restoring.done };
}

/** A backup file of `n` junk entries (restore's checks pass them: an unknown prefix). */
async function junkBackup(file: string, n: number, tag = "junk"): Promise<void> {
  const line = (i: number) =>
    JSON.stringify({ key: [{ s: tag }, { n: i }], value: { t: "json", v: i } });
  await Deno.writeTextFile(
    file,
    [
      JSON.stringify({ format: "shelf-backup/2", entries: n }),
      ...Array.from({ length: n }, (_, i) => line(i)),
    ].join("\n") + "\n",
  );
}

Deno.test("restore: a backup file changed while it is written fails the restore and leaves the store marked (probe HJ)", () =>
  inStore(async (dir, kv) => {
    const { file, done } = await writingJunk(kv, dir);
    await Deno.utime(file, new Date(), new Date(Date.now() + 60_000));
    await assert.rejects(
      done,
      /changed while it was being restored; \d+ entries were written/,
    );
    assert.match((await unfinishedRestore(kv)) ?? "", /holds a restore of .* that did not finish/);
  }));

Deno.test("restore: of two restores started together into one store, one is refused and the store holds the other's entries alone (probe HJ)", () =>
  inStore(async (dir, kv) => {
    await junkBackup(`${dir}/a.jsonl`, 300, "from_a");
    await junkBackup(`${dir}/b.jsonl`, 300, "from_b");
    const results = await Promise.allSettled([
      restore(kv, `${dir}/a.jsonl`),
      restore(kv, `${dir}/b.jsonl`),
    ]);
    const done = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    assert.equal(done.length, 1, JSON.stringify(results));
    assert.match(String(refused[0]?.reason), /not empty/);
    const a = (await Array.fromAsync(kv.list({ prefix: ["from_a"] }))).length;
    const b = (await Array.fromAsync(kv.list({ prefix: ["from_b"] }))).length;
    assert.deepEqual([a, b].sort(), [0, 300]);
    assert.equal(await unfinishedRestore(kv), null, "the whole restore cleared its mark");
  }));

Deno.test("restore: a mark of any value, an object or not, is refused (probe HJ)", () =>
  inStore(async (_dir, kv) => {
    for (const mark of ["x", 0, [], { entries: 1 }, null]) {
      await kv.set(KV.restoreUnfinished, mark);
      assert.match((await unfinishedRestore(kv)) ?? "", /holds a restore that did not finish/);
    }
  }));

Deno.test("restore: stopped at any point, it leaves no key that works without the entry its revoke needs (probe HK)", async () => {
  const dir = await Deno.makeTempDir();
  const source = `${dir}/source.kv`;
  const target = `${dir}/target.kv`;
  try {
    const kv = await Deno.openKv(source);
    try {
      const accounts = new Accounts(kv, builtinPlans(), systemClock);
      for (let i = 0; i < 400; i += 50) {
        await Promise.all(Array.from({ length: 50 }, async (_, j) => {
          const a = await accounts.create(`k${i + j}@example.com`, "starter");
          await accounts.createKey(a.id);
        }));
      }
      await backup(kv, `${dir}/keys.jsonl`);
    } finally {
      kv.close();
    }
    const child = admin(target, "restore", `${dir}/keys.jsonl`).spawn();
    // Stopped as soon as a key can be found by its value: a key digest entry is in the store.
    const watch = await Deno.openKv(target);
    try {
      for (let i = 0; i < 1_000; i++) {
        const any = await Array.fromAsync(watch.list({ prefix: KV.keyByHash("").slice(0, 1) }, {
          limit: 1,
        }));
        if (any.length) break;
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      watch.close();
    }
    child.kill("SIGINT");
    await child.output();
    const after = await Deno.openKv(target);
    try {
      const digests = await Array.fromAsync(
        after.list<{ key_id: string }>({ prefix: KV.keyByHash("").slice(0, 1) }),
      );
      assert.ok(digests.length > 0, "the restore had begun writing key digests");
      for (const d of digests) {
        const byId = await after.get(KV.keyById(d.value.key_id));
        assert.ok(byId.versionstamp, `key ${d.value.key_id} works and has no key id entry`);
      }
    } finally {
      after.close();
    }
  } finally {
    await removeKvFiles(source);
    await removeKvFiles(target);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("restore: a file rewritten between its passes at the same size and times is seen, and the store left marked (probe HL)", () =>
  inStore(async (dir, kv) => {
    const file = `${dir}/many.jsonl`;
    await junkBackup(file, 5_000);
    const { mtime, atime } = await Deno.stat(file);
    // The runtime gives a file's change time in whole seconds: all of this within one second
    // leaves the file's size and times as they were when the restore began.
    while (Date.now() % 1_000 > 20) await new Promise((r) => setTimeout(r, 5));
    await Deno.utime(file, atime!, mtime!);
    const restoring = restoreUnderWay(kv, file);
    await restoring.writing;
    // Two lines of one length swapped ahead of the writing, then the times put back.
    const lines = (await Deno.readTextFile(file)).split("\n");
    [lines[4_001], lines[4_002]] = [lines[4_002], lines[4_001]];
    await Deno.writeTextFile(file, lines.join("\n"));
    await Deno.utime(file, atime!, mtime!);
    await assert.rejects(
      restoring.done,
      /changed while it was being restored; \d+ entries were written/,
    );
    assert.match((await unfinishedRestore(kv)) ?? "", /that did not finish/);
  }));

Deno.test("restore: a line added to the file while it is written is named as the file's change, not the store's (probe HL)", () =>
  inStore(async (dir, kv) => {
    const { file, done } = await writingJunk(kv, dir);
    // The first entry again, at the end: its write meets the entry already written.
    const first = (await Deno.readTextFile(file)).split("\n")[1];
    await Deno.writeTextFile(file, first + "\n", { append: true });
    await assert.rejects(
      done,
      (e: Error) => {
        assert.match(e.message, new RegExp(`${file} changed while it was being restored`));
        assert.doesNotMatch(e.message, /the store changed/);
        return true;
      },
    );
    assert.match((await unfinishedRestore(kv)) ?? "", /that did not finish/);
  }));
