/**
 * A restore told to stop (Ctrl-C) while it writes ends between two commits and says how far it
 * got and what to do: killed by the signal, it left a partly written store without a word, some
 * of whose keys worked and could not be revoked (probe HE). The real CLI on a real KV file.
 */
import assert from "node:assert/strict";
import { removeKvFiles } from "../core/kv_files.ts";

const ENTRIES = 60_000;

Deno.test("restore: a SIGINT while it writes stops it between commits, naming how many entries the store holds", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/target.kv`;
  try {
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
    const child = new Deno.Command(Deno.execPath(), {
      // The admin task's own command line (deno.json), run directly so the signal reaches it.
      args: [
        "run",
        "--allow-env",
        "--allow-read",
        "--allow-write",
        "--allow-net",
        "cli/admin.ts",
        "restore",
        file,
      ],
      cwd: new URL("..", import.meta.url).pathname,
      env: { KV_PATH: kvPath, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
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
    child.kill("SIGINT");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.notEqual(out.code, 0, stderr);
    const said =
      /stopped by SIGINT after (\d+) of 60000 entries were written; the store holds them: delete it/
        .exec(stderr);
    assert.ok(said, stderr);
    const written = Number(said[1]);
    assert.ok(written > 0 && written < ENTRIES, `${written} written`);
    // What it says is what the store holds.
    const after = await Deno.openKv(kvPath);
    try {
      assert.equal((await Array.fromAsync(after.list({ prefix: ["junk"] }))).length, written);
    } finally {
      after.close();
    }
  } finally {
    await removeKvFiles(kvPath);
    await Deno.remove(dir, { recursive: true });
  }
});
