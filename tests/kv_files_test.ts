import assert from "node:assert/strict";
import { removeKvFiles, removeKvFilesSync } from "../core/kv_files.ts";

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
