/**
 * What restore writes (cli/backup.ts): an entry that carries `expires_at` gets KV's own expiry at
 * that moment, so KV drops it when its life is over; and an entry another writer puts in the
 * store while the restore runs is neither overwritten nor counted as restored: the restore fails
 * as the store changed. Real KV files (KV's expiry read from the SQLite file itself), the restore
 * the admin CLI runs.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { backup, restore } from "../cli/backup.ts";
import { DEVICE_MS, rememberDevice } from "../metering/sign_in_devices.ts";
import { KV } from "../metering/kv_layout.ts";

async function inDir(test: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await test(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a sign-in device comes back with KV's expiry at its own expires_at, not later", () =>
  inDir(async (dir) => {
    const source = await Deno.openKv(`${dir}/source.kv`);
    let expiresAt: number;
    try {
      // Signed in 30 days ago: 60 of its 90 days are left.
      const token = await rememberDevice(
        source,
        "device@example.com",
        null,
        Date.now() - 30 * 86_400_000,
        0,
      );
      assert.ok(token);
      const held = await Array.fromAsync(source.list<{ expires_at: number }>({
        prefix: KV.signinDevice("").slice(0, 1),
      }));
      assert.equal(held.length, 1);
      expiresAt = held[0].value.expires_at;
      assert.ok(expiresAt > Date.now() + DEVICE_MS / 2, "the device's life is not over");
      await backup(source, `${dir}/backup.jsonl`);
    } finally {
      source.close();
    }
    const target = await Deno.openKv(`${dir}/target.kv`);
    try {
      assert.equal(await restore(target, `${dir}/backup.jsonl`), 1);
    } finally {
      target.close();
    }
    // KV's expiry column (-1: never). A life of expires_at itself (some 56 years) kept the
    // device in the store long after; only the readers' own check of expires_at hid it.
    const db = new DatabaseSync(`${dir}/target.kv`);
    try {
      const rows = db.prepare("SELECT expiration_ms FROM kv WHERE expiration_ms >= 0").all() as {
        expiration_ms: number;
      }[];
      assert.equal(rows.length, 1, "one entry with a life");
      const slack = 5 * 60_000;
      assert.ok(
        Math.abs(rows[0].expiration_ms - expiresAt) <= slack,
        `KV expires it at ${rows[0].expiration_ms}, the entry says ${expiresAt}`,
      );
    } finally {
      db.close();
    }
  }));

Deno.test("an entry another writer puts in the store during a restore is not overwritten: the restore fails as the store changed", () =>
  inDir(async (dir) => {
    const n = 3000;
    const file = `${dir}/backup.jsonl`;
    const line = (i: number) =>
      JSON.stringify({ key: [{ s: "junk" }, { n: i }], value: { t: "json", v: `backup-${i}` } });
    await Deno.writeTextFile(
      file,
      [
        JSON.stringify({ format: "shelf-backup/2", entries: n }),
        ...Array.from({ length: n }, (_, i) => line(i)),
      ].join("\n") + "\n",
    );
    const kvPath = `${dir}/target.kv`;
    const kv = await Deno.openKv(kvPath);
    const other = await Deno.openKv(kvPath);
    try {
      let done = false;
      const run = restore(kv, file).then(() => null, (e: Error) => e.message).finally(() => {
        done = true;
      });
      // Once the restore has begun writing (its mark is there), the keys of its last commit,
      // ten entries, are written by someone else.
      let wrote = false;
      while (!done && !wrote) {
        if ((await other.get(KV.restoreUnfinished)).versionstamp !== null) {
          const op = other.atomic();
          for (let i = n - 10; i < n; i++) op.set(["junk", i], "theirs");
          assert.ok((await op.commit()).ok);
          wrote = true;
        }
        await new Promise((r) => setTimeout(r, 0));
      }
      const error = await run;
      assert.ok(wrote, "the restore ended before the other writer could write");
      assert.match(
        error ?? "restored",
        /^Cannot restore: the store changed while it was being restored \(after \d+ entries\); restore into a new store$/,
      );
      for (let i = n - 10; i < n; i++) {
        assert.equal((await other.get(["junk", i])).value, "theirs", `["junk", ${i}]`);
      }
      // Left marked unfinished: nothing will serve it.
      assert.notEqual((await other.get(KV.restoreUnfinished)).versionstamp, null);
    } finally {
      kv.close();
      other.close();
    }
  }));
