/**
 * Processes on one KV file: a checked commit that another process's write overtakes is refused
 * at once by SQLite ("database is locked"), and the meter takes 16 refusals in a row for a store
 * that refuses writes (503). Once they have met, processes take turns to commit
 * (core/commit_turns.ts) and lose no commit that way.
 */
import assert from "node:assert/strict";
import { tempKv } from "./proof/http.ts";
import { commitLockFile, removeKvFiles } from "../core/kv_files.ts";

const HAMMER = new URL("./proof/commit_hammer.ts", import.meta.url).pathname;

async function hammer(kvPath: string, start: number, seconds: number) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", HAMMER, kvPath, String(start), String(seconds)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(out.success, "the hammer process ends well");
  return JSON.parse(new TextDecoder().decode(out.stdout).trim()) as {
    landed: number;
    conflicts: number;
    threw: number;
    threwLate: number;
  };
}

Deno.test("three processes committing checked writes to one KV file: refusals end once they have met", async () => {
  const kvPath = await tempKv();
  try {
    const start = Date.now() + 3000; // after all three have started and opened the store
    const results = await Promise.all([1, 2, 3].map(() => hammer(kvPath, start, 4)));
    console.log(results);
    for (const r of results) {
      assert.ok(r.landed > 0, `each process lands commits: ${JSON.stringify(r)}`);
    }
    // Once a process has met the others it commits one at a time under the lock, so a process
    // slowed past the first second by a loaded machine can still meet late: each of the others'
    // one commit in flight, and its own 32, may be refused then. Without turns: thousands.
    const late = results.reduce((n, r) => n + r.threwLate, 0);
    assert.ok(late <= 64, `refusals after the first second: ${JSON.stringify(results)}`);
    const lock = await Deno.stat(commitLockFile(kvPath));
    assert.equal(lock.mode! & 0o077, 0, "the turns file is the owner's alone");
  } finally {
    await removeKvFiles(kvPath);
  }
});
