import assert from "node:assert/strict";
import { isStoreFile, removeKvFiles, removeKvFilesSync } from "../core/kv_files.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

for (const [name, remove] of [["async", removeKvFiles], ["sync", removeKvFilesSync]] as const) {
  Deno.test(`kv files (${name}): a store's write-ahead log and shared memory go with it`, async () => {
    const path = await Deno.makeTempFile({ suffix: ".kv" });
    const kv = await Deno.openKv(path);
    await kv.set(["k"], "v");
    const sides = [`${path}-wal`, `${path}-shm`];
    for (const p of sides) assert.ok(await exists(p), `${p} should exist while the store is open`);
    await remove(path);
    kv.close();
    assert.deepEqual(
      await Promise.all([path, ...sides].map(exists)),
      [false, false, false],
    );
    await remove(path); // gone already: no error
  });
}

for (const [name, remove] of [["async", removeKvFiles], ["sync", removeKvFilesSync]] as const) {
  Deno.test(`kv files (${name}): a backup's rollback journal (-journal) goes with the store and counts as its file`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const path = `${dir}/store.kv`;
      const sides = [`${path}-wal`, `${path}-shm`, `${path}-journal`, `${path}-turns`];
      for (const p of [path, ...sides]) await Deno.writeTextFile(p, "x");
      // Writing a backup or a recording into the journal would corrupt the store or be lost.
      assert.ok(isStoreFile(`${path}-journal`, path), "-journal is one of the store's files");
      assert.ok(!isStoreFile(`${path}-journal.bak`, path), "a file merely named alike is not");
      await remove(path);
      assert.deepEqual(
        await Promise.all([path, ...sides].map(exists)),
        [false, false, false, false, false],
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
