/**
 * A store carries the layout of the version that wrote it (metering/store_layout.ts): an older
 * version started on a newer one's store misread it (README "Upgrading"); from this version on,
 * a version refuses a store of a later layout, naming both, and marks older ones with its own.
 */
import assert from "node:assert/strict";
import { runToEnd, spawnShelf } from "./proof/shelf_process.ts";
import { KV } from "../metering/kv_layout.ts";
import { STORE_LAYOUT } from "../metering/store_layout.ts";
import { removeKvFiles } from "../core/kv_files.ts";

async function layoutOf(kvPath: string): Promise<unknown> {
  const kv = await Deno.openKv(kvPath);
  try {
    return (await kv.get(KV.storeLayout)).value;
  } finally {
    kv.close();
  }
}

async function markAs(kvPath: string, layout: unknown): Promise<void> {
  const kv = await Deno.openKv(kvPath);
  try {
    await kv.set(KV.storeLayout, layout);
  } finally {
    kv.close();
  }
}

Deno.test("store layout: a server marks the store it opens; a later layout, or a mark that is no layout, is refused by the server and the admin CLI", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/shelf.kv`;
  try {
    const shelf = await spawnShelf({ KV_PATH: kvPath, UPSTREAM: "origin:http://127.0.0.1:9" });
    assert.equal(await shelf.stop(), 0);
    assert.equal(await layoutOf(kvPath), STORE_LAYOUT);

    const refusals: [unknown, RegExp][] = [
      [
        STORE_LAYOUT + 1,
        new RegExp(
          `written by a newer version of Shelf \\(store layout ${
            STORE_LAYOUT + 1
          }; this version reads layout ${STORE_LAYOUT} and earlier\\)`,
        ),
      ],
      ["1", /its layout mark is not a layout number/],
      [-1, /its layout mark is not a layout number/],
    ];
    for (const [mark, pattern] of refusals) {
      await markAs(kvPath, mark);
      const server = await runToEnd("main.ts", kvPath);
      assert.equal(server.code, 1, server.stderr);
      assert.equal(server.stderr.trim().split("\n").length, 1, server.stderr);
      assert.match(server.stderr, new RegExp(`^shelf: Cannot use the store at ${kvPath}: `));
      assert.match(server.stderr, pattern);
      const admin = await runToEnd("cli/admin.ts", kvPath, "account", "list");
      assert.equal(admin.code, 1, admin.stderr);
      assert.match(admin.stderr, pattern);
      assert.deepEqual(await layoutOf(kvPath), mark, "the mark is left as it was");
    }
    // An older layout is raised to this version's.
    await markAs(kvPath, 0);
    const admin = await runToEnd("cli/admin.ts", kvPath, "account", "list");
    assert.equal(admin.code, 0, admin.stderr);
    assert.equal(await layoutOf(kvPath), STORE_LAYOUT);
  } finally {
    await removeKvFiles(kvPath);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("store layout: the admin CLI leaves a store that holds nothing unmarked and marks it once it holds something, and a backup's marks and instance entries (an older CLI wrote them) are passed over (probe HK)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // An empty store stays empty: an older version's restore into it would call it not empty.
    const empty = `${dir}/empty.kv`;
    const listed = await runToEnd("cli/admin.ts", empty, "account", "list");
    assert.equal(listed.code, 0, listed.stderr);
    const kv = await Deno.openKv(empty);
    try {
      assert.deepEqual(await Array.fromAsync(kv.list({ prefix: [] })), []);
    } finally {
      kv.close();
    }
    // A backup as an older CLI writes one of a store this version opened: its layout mark and a
    // server's instance entry among the entries.
    const file = `${dir}/old.jsonl`;
    const lines = [
      { key: [{ s: "account_email" }, { s: "old@example.com" }], value: { t: "json", v: "acc_x" } },
      {
        key: [{ s: "instance" }, { s: "ins_0011223344556677" }],
        value: {
          t: "json",
          v: {
            catalog: "a".repeat(64),
            started_at: new Date().toISOString(),
            expires_at: Date.now() + 60_000,
          },
        },
      },
      { key: [{ s: "store_layout" }], value: { t: "json", v: STORE_LAYOUT } },
    ];
    await Deno.writeTextFile(
      file,
      [{ format: "shelf-backup/2", entries: lines.length }, ...lines].map((l) => JSON.stringify(l))
        .join("\n") + "\n",
    );
    const restored = await runToEnd("cli/admin.ts", empty, "restore", file);
    assert.equal(restored.code, 0, restored.stderr);
    const after = await Deno.openKv(empty);
    try {
      const keys = (await Array.fromAsync(after.list({ prefix: [] }))).map((e) => e.key[0]);
      assert.deepEqual(keys, ["account_email"], "restored entry for entry");
    } finally {
      after.close();
    }
    // Holding something now, the store is marked by the next command that opens it.
    assert.equal((await runToEnd("cli/admin.ts", empty, "account", "list")).code, 0);
    assert.equal(await layoutOf(empty), STORE_LAYOUT);
    // The admin CLI on a store of this command alone is refused.
    const memory = await runToEnd("cli/admin.ts", ":memory:", "account", "list");
    assert.equal(memory.code, 1);
    assert.match(memory.stderr, /KV_PATH=:memory: is a store of this command alone/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
