/**
 * Where the store lives and what its files let others do (README "Security": "Shelf creates a new
 * KV file 0600 in a directory it creates 0700 … an existing file keeps the mode it has"): the
 * store holds webhook secrets and the digests of keys and passwords. Also which KV_PATH values
 * name a local file at all, and a backup's target that exists only as a dangling symlink.
 */
import assert from "node:assert/strict";
import { loadConfig, localKvFile } from "../config.ts";
import { spawnShelf } from "./proof/shelf_process.ts";
import { adminTask } from "./admin_calls.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

const modeOf = async (path: string) => (await Deno.stat(path)).mode! & 0o777;

Deno.test("a store the server creates is 0600 in a new folder of 0700; an existing store keeps its mode", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/new/shelf.kv`;
    {
      await using shelf = await spawnShelf({
        KV_PATH: kvPath,
        UPSTREAM: "origin:http://127.0.0.1:9",
      });
      assert.match(shelf.logs(), /listening/);
      assert.equal((await modeOf(`${dir}/new`)).toString(8), "700", "the new folder");
      // Checked while the server holds the store open: SQLite's side files exist then.
      for (const f of [kvPath, `${kvPath}-wal`, `${kvPath}-shm`]) {
        const mode = await Deno.stat(f).then((s) => s.mode! & 0o777, () => null);
        if (f === kvPath) assert.notEqual(mode, null, "the store file exists");
        if (mode !== null) assert.equal(mode.toString(8), "600", f);
      }
    }
    // The operator's own choice (a group that backs it up) is left alone on the next start.
    await Deno.chmod(kvPath, 0o640);
    {
      await using shelf = await spawnShelf({
        KV_PATH: kvPath,
        UPSTREAM: "origin:http://127.0.0.1:9",
      });
      assert.match(shelf.logs(), /listening/);
      assert.equal((await modeOf(kvPath)).toString(8), "640");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KV_PATH: on Deno Deploy, unset means the platform's KV, never a local file; elsewhere ./data/shelf.kv", () => {
  assert.equal(loadConfig(env({ DENO_DEPLOYMENT_ID: "d1" })).kvPath, undefined);
  assert.equal(loadConfig(env({ DENO_DEPLOYMENT_ID: "d1", KV_PATH: "" })).kvPath, undefined);
  assert.equal(loadConfig(env({})).kvPath, "./data/shelf.kv");
  assert.equal(
    loadConfig(env({ DENO_DEPLOYMENT_ID: "d1", KV_PATH: "https://kv.example/db" })).kvPath,
    "https://kv.example/db",
  );
});

Deno.test("KV_PATH: only a path names a local file; :memory:, a KV Connect URL and the platform's KV do not", () => {
  // A local file gets a folder, modes, a commit lock beside it and the store-file checks.
  assert.equal(localKvFile(":memory:"), undefined);
  assert.equal(localKvFile("https://kv.example/db"), undefined);
  assert.equal(localKvFile("http://127.0.0.1:4512/"), undefined);
  assert.equal(localKvFile(undefined), undefined);
  assert.equal(localKvFile("./data/shelf.kv"), "./data/shelf.kv");
  assert.equal(localKvFile("/var/lib/shelf/memory.kv"), "/var/lib/shelf/memory.kv");
});

Deno.test("backup onto a dangling symlink is refused without --force: the operator's link is left as it was", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/shelf.kv`;
    const created = await adminTask(kvPath, "account", "create", "--email", "keep@example.com");
    assert.equal(created.code, 0, created.stderr);
    // A link whose target is not there yet (a mount not made, a file moved away) still exists.
    const link = `${dir}/nightly.jsonl`;
    const target = `${dir}/mnt/backups/nightly.jsonl`;
    await Deno.symlink(target, link);
    const refused = await adminTask(kvPath, "backup", link);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /exists; name a new file, or add --force to replace it/);
    assert.ok((await Deno.lstat(link)).isSymlink, "the link was replaced");
    assert.equal(await Deno.readLink(link), target);
    const fresh = await adminTask(kvPath, "backup", `${dir}/other.jsonl`);
    assert.equal(fresh.code, 0, `a new name is backed up: ${fresh.stderr}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
