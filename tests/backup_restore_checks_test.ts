/**
 * Restore's checks of a backup as a whole (cli/backup.ts, cli/backup_entries.ts), each on a file
 * that a real store's backup becomes with one edit: audit entries of revoked keys, key index and
 * digest entries, account records from before revoked keys moved out of them, times at the very
 * start of 1970, the line named when several in one commit cannot be written, and a backup that
 * changes while its check pass reads it. Real KV files; the functions and the admin CLI.
 */
import assert from "node:assert/strict";
import { ADMIN, ROOT } from "./admin_calls.ts";
import { restore } from "../cli/backup.ts";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { unfinishedRestore } from "../metering/unfinished_restore.ts";
import { pathExists, removeKvFiles } from "../core/kv_files.ts";
import { digestLineOf, filler, inDir, type Line, lineOf, realBackup } from "./backup_lines.ts";

async function write(file: string, lines: (Line | string)[]): Promise<void> {
  const text = lines.map((l) => typeof l === "string" ? l : JSON.stringify(l));
  const header = JSON.stringify({ format: "shelf-backup/2", entries: lines.length });
  await Deno.writeTextFile(file, [header, ...text].join("\n") + "\n");
}

/** Restores `lines` into a new store; what restore threw (null: it restored) and what it left. */
async function restored(dir: string, lines: (Line | string)[]) {
  const file = `${dir}/${crypto.randomUUID()}.jsonl`;
  const kvPath = `${dir}/${crypto.randomUUID()}.kv`;
  await write(file, lines);
  const kv = await Deno.openKv(kvPath);
  try {
    const error = await restore(kv, file).then(() => null, (e: Error) => e.message);
    const held = await Array.fromAsync(kv.list({ prefix: [] }));
    const account = held.find((e) => e.key[0] === "account")?.key[1] as string | undefined;
    const keys = error || !account
      ? []
      : await new Accounts(kv, builtinPlans(), systemClock).listKeys(account);
    return { error, held: held.length, keys };
  } finally {
    kv.close();
    await removeKvFiles(kvPath);
    await Deno.remove(file);
  }
}

/** The refusal of an edited file: the line named, why, and nothing written. */
function assertRefused(
  got: { error: string | null; held: number },
  pattern: RegExp,
  what: string,
): void {
  assert.ok(got.error, `${what}: restored, where it must be refused`);
  assert.match(got.error, /^Cannot restore: .* line \d+: /, what);
  assert.match(got.error, pattern, what);
  assert.equal(got.held, 0, `${what}: nothing written`);
}

Deno.test("the unedited backup of a store with an active and a revoked key restores, both keys listed as they were", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "checks@example.com");
    const got = await restored(dir, real.lines);
    assert.equal(got.error, null);
    const status = Object.fromEntries(got.keys.map((k) => [k.id, k.status]));
    assert.deepEqual(status, { [real.keyId]: "active", [real.revokedId]: "revoked" });
  }));

Deno.test("a revoked key's audit entry is refused when it holds another key's id, or a key that is not revoked", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "checks@example.com");
    const audit = lineOf(real.lines, "revoked_key", real.revokedId);
    const edits: [string, (v: Record<string, unknown>) => void, RegExp][] = [
      // Listed under its own id, it would show the active key's id a second time.
      ["another key's id", (v) => (v.id = real.keyId), /revoked key: id is not the key's/],
      // Listed as active though it opens nothing: the owner sees a key that does not work.
      ["status active", (v) => (v.status = "active"), /revoked key: status: /],
    ];
    for (const [what, edit, pattern] of edits) {
      const lines = structuredClone(real.lines);
      edit(lines[audit].value.v as Record<string, unknown>);
      assertRefused(await restored(dir, lines), pattern, what);
    }
  }));

Deno.test("a key index entry whose digest is not 64 lower-case hex digits is refused, even with no digest entry to compare it with", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "checks@example.com");
    const index = lineOf(real.lines, "key_id", real.revokedId);
    const digest = digestLineOf(real.lines, real.revokedId);
    // A revoked key whose digest entry is gone restores: only its index entry is left to check.
    const withoutDigest = structuredClone(real.lines);
    withoutDigest[digest] = filler(1);
    assert.equal((await restored(dir, withoutDigest)).error, null, "without the digest entry");
    for (const hash of ["Z".repeat(64), "ab".repeat(31), "not a digest"]) {
      const lines = structuredClone(withoutDigest);
      (lines[index].value.v as { hash: string }).hash = hash;
      assertRefused(await restored(dir, lines), /key index: hash: /, `hash ${hash}`);
    }
  }));

Deno.test("a second digest entry for one key is refused: it would be a second value that opens the key", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "checks@example.com");
    // The key index entry as versions before layout 2 wrote it, the bare account id: no digest
    // of its own to compare a digest entry with.
    const legacy = structuredClone(real.lines);
    legacy[lineOf(legacy, "key_id", real.keyId)].value.v = real.accountId;
    assert.equal((await restored(dir, legacy)).error, null, "one digest entry, legacy index");
    const second = structuredClone(legacy[digestLineOf(legacy, real.keyId)]);
    second.key[1] = { s: "e".repeat(64) };
    assertRefused(
      await restored(dir, [...legacy, second]),
      new RegExp(`key digest entry: a second digest of key ${real.keyId}`),
      "a second digest",
    );
  }));

Deno.test("an account record from before revoked keys moved out, holding a revoked key with no digest entry, restores", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "checks@example.com");
    const lines = structuredClone(real.lines);
    const audit = lineOf(lines, "revoked_key", real.revokedId);
    const record = lines[lineOf(lines, "account")].value.v as { keys: Record<string, unknown> };
    record.keys[real.revokedId] = lines[audit].value.v;
    // Such a key was forgotten by value: its digest entry is gone, its index entry stays.
    lines[audit] = filler(1);
    lines[digestLineOf(lines, real.revokedId)] = filler(2);
    const got = await restored(dir, lines);
    assert.equal(got.error, null);
    const status = Object.fromEntries(got.keys.map((k) => [k.id, k.status]));
    assert.deepEqual(status, { [real.keyId]: "active", [real.revokedId]: "revoked" });
  }));

Deno.test("a time of exactly 1970-01-01T00:00:00Z restores, as milliseconds or as text; a millisecond before is refused", () =>
  inDir(async (dir) => {
    const entry = (n: number, v: unknown): Line => ({
      key: [{ s: "junk" }, { n }],
      value: { t: "json", v },
    });
    const epoch = await restored(dir, [
      entry(1, { at: 0 }),
      entry(2, { seen_at: "1970-01-01T00:00:00.000Z" }),
      entry(3, { nested: { last_used_at: 0 } }),
    ]);
    assert.equal(epoch.error, null);
    assert.equal(epoch.held, 3);
    const before = await restored(dir, [entry(1, { seen_at: -1 })]);
    assertRefused(before, /line 2: seen_at: not a time from 1970/, "a millisecond before 1970");
  }));

Deno.test("of lines one commit holds, the first that cannot be written is the one named, though a later one is not even JSON", () =>
  inDir(async (dir) => {
    const junk = (n: number, v: unknown): Line => ({
      key: [{ s: "junk" }, { n }],
      value: { t: "json", v },
    });
    const cases: [(Line | string)[], RegExp][] = [
      // KV refuses line 2's value; line 3 is cut short.
      [[junk(1, "x".repeat(70_000)), '{"key":[{"s":"junk"'], /line 2: Value too large/],
      [[junk(1, 1), junk(1, 2), "not json"], /line 3: the same key as an earlier line/],
    ];
    for (const [lines, pattern] of cases) {
      const got = await restored(dir, lines);
      assertRefused(got, pattern, String(pattern));
      assert.doesNotMatch(got.error!, /not JSON/, "the earlier line is named, not the later");
    }
  }));

/** Where process `pid` is reading `file` (the offset of its descriptor), or null if it is not. */
function offsetIn(pid: number, file: string): number | null {
  for (const fd of Deno.readDirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = Deno.readLinkSync(`/proc/${pid}/fd/${fd.name}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target !== file) continue;
    const info = Deno.readTextFileSync(`/proc/${pid}/fdinfo/${fd.name}`);
    return Number(/^pos:\s+(\d+)/m.exec(info)![1]);
  }
  return null;
}

/** Whether process `pid` is stopped (SIGSTOP), as /proc tells it. */
function isStopped(pid: number): boolean {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
}

Deno.test({
  name:
    "a backup changed while restore's check pass reads it is refused before the store is marked or written",
  // The restore is paused (SIGSTOP) to see where it reads (/proc): Linux only.
  ignore: Deno.build.os !== "linux",
  fn: () =>
    inDir(async (tmp) => {
      const dir = await Deno.realPath(tmp);
      const file = `${dir}/big.jsonl`;
      const kvPath = `${dir}/target.kv`;
      // Several read chunks of a MiB: the check pass reads it in several steps.
      await write(
        file,
        Array.from({ length: 6_000 }, (_, n) => ({
          key: [{ s: "junk" }, { n }],
          value: { t: "json", v: "x".repeat(1_000) },
        })),
      );
      const size = (await Deno.stat(file)).size;
      const child = new Deno.Command(Deno.execPath(), {
        args: [...ADMIN, "restore", file],
        cwd: ROOT,
        env: { KV_PATH: kvPath, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const output = child.output();
      let exited = false;
      child.status.then(() => (exited = true));
      let touched = false;
      // Only to look, while the restore is paused: closed before it goes on for good.
      let kv: Deno.Kv | null = null;
      try {
        for (let i = 0; i < 3_000 && !touched && !exited; i++) {
          await new Promise((r) => setTimeout(r, 5));
          try {
            child.kill("SIGSTOP");
          } catch {
            break; // it ended meanwhile
          }
          try {
            for (let j = 0; j < 1_000 && !isStopped(child.pid); j++) {
              await new Promise((r) => setTimeout(r, 1));
            }
            const at = offsetIn(child.pid, file);
            if (at === null || at === 0 || at >= size) continue;
            // Read part way, and nothing written yet: the check pass, which writes nothing.
            kv ??= await Deno.openKv(kvPath);
            if ((await Array.fromAsync(kv.list({ prefix: [] }, { limit: 1 }))).length) continue;
            // A write to the file changes its times (the runtime gives seconds: mtime moved on).
            await Deno.utime(file, new Date(), new Date(Date.now() + 60_000));
            touched = true;
          } finally {
            kv?.close();
            kv = null;
            child.kill("SIGCONT");
          }
        }
      } catch (e) {
        try {
          child.kill("SIGKILL");
        } catch { /* it ended */ }
        await output;
        throw e;
      }
      try {
        const out = await output;
        const stderr = new TextDecoder().decode(out.stderr);
        assert.ok(touched, `the check pass was never seen under way: ${stderr}`);
        assert.equal(out.code, 1, stderr);
        assert.match(stderr, /big\.jsonl changed while it was being restored; nothing was written/);
        // The command removes a store it made and wrote nothing to; one left must hold nothing.
        if (await pathExists(kvPath)) {
          const left = await Deno.openKv(kvPath);
          try {
            assert.equal(await unfinishedRestore(left), null, "the store is not marked");
            assert.deepEqual(await Array.fromAsync(left.list({ prefix: [] })), [], "nor written");
          } finally {
            left.close();
          }
        }
      } finally {
        await removeKvFiles(kvPath);
      }
    }),
});
