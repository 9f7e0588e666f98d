/**
 * `admin backup FILE` told to stop (Ctrl-C) while it writes removes its temporary files before it
 * exits: the `.shelf-backup-*` and `.shelf-snapshot-*` files beside FILE hold key digests and
 * webhook secrets, and one left behind is a copy of them nobody asked for. The real CLI as a
 * child process on a real KV file.
 */
import assert from "node:assert/strict";
import { ADMIN, ROOT } from "./admin_calls.ts";
import { removeKvFiles } from "../core/kv_files.ts";

/** Enough entries that the backup is still writing when its first temporary file appears. */
const ENTRIES = 40_000;

const names = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();

Deno.test("a SIGINT during `admin backup` ends it with exit code 130 and leaves no .shelf-* file beside FILE", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/store.kv`;
  try {
    const kv = await Deno.openKv(kvPath);
    try {
      for (let i = 0; i < ENTRIES; i += 500) {
        const op = kv.atomic();
        for (let j = i; j < i + 500; j++) op.set(["junk", j], "x".repeat(200));
        await op.commit();
      }
    } finally {
      kv.close();
    }
    const out = `${dir}/out`;
    await Deno.mkdir(out);
    const child = new Deno.Command(Deno.execPath(), {
      args: [...ADMIN, "backup", `${out}/backup.jsonl`],
      cwd: ROOT,
      env: { KV_PATH: kvPath, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const result = child.output();
    let exited = false;
    result.finally(() => (exited = true));
    // Interrupted as soon as a temporary file is there, while the backup is under way.
    let seen: string[] = [];
    for (let i = 0; i < 12_000 && !exited && seen.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 5));
      seen = names(out).filter((n) => n.startsWith(".shelf-"));
    }
    assert.ok(seen.length > 0, "no temporary file seen while the backup ran");
    child.kill("SIGINT");
    const { code, stderr } = await result;
    assert.equal(code, 130, new TextDecoder().decode(stderr));
    assert.deepEqual(names(out), [], "nothing left beside FILE");
  } finally {
    await removeKvFiles(kvPath);
    await Deno.remove(dir, { recursive: true });
  }
});
