/**
 * A process that commits checked writes to a shared KV file as fast as it can, as Shelf's meter
 * does under load, backing off after a refusal as every committer in Shelf does (lock_backoff.ts):
 * `deno run -A commit_hammer.ts KV_PATH START SECONDS [plain | WAIT_MS]`, starting at the epoch
 * millisecond START so that processes started one after another begin together. The store is
 * opened as Shelf opens it (config.ts openStore), with WAIT_MS for a commit's wait for the turn,
 * or with `plain` as Deno opens it, without turns. Prints one JSON line: commits that landed, that
 * lost their check, that threw, when each throw came (epoch ms), and how many landed in each
 * second. Each process writes keys of its own: what processes on one file refuse each other is
 * SQLite's lock, whatever the keys; on shared keys a process the machine ran less than the others
 * also lost nearly every check to their writes (18 landed against 160 and 120 in CI, and once
 * none), which is no part of what the turns are measured for.
 */
import { openStore } from "../../config.ts";
import { afterLocked } from "../../core/lock_backoff.ts";

const [path, startAt, seconds, mode] = Deno.args;
const kv = mode === "plain"
  ? await Deno.openKv(path)
  : await openStore(path, mode ? Number(mode) : undefined);
const start = Number(startAt);
await new Promise((r) => setTimeout(r, Math.max(0, start - Date.now())));
const end = start + Number(seconds) * 1000;
const counts = {
  landed: 0,
  conflicts: 0,
  threw: 0,
  threwAt: [] as number[],
  perSecond: [] as number[],
};
const record = { pad: "x".repeat(700) };
await Promise.all(Array.from({ length: 32 }, async (_, i) => {
  const key = ["hammer", Deno.pid, i % 20];
  let refusedInRow = 0;
  while (Date.now() < end) {
    if (refusedInRow > 0) await afterLocked(refusedInRow);
    const current = await kv.get(key);
    try {
      const r = await kv.atomic().check(current).set(key, record).commit();
      refusedInRow = 0;
      if (r.ok) {
        counts.landed++;
        const second = Math.floor((Date.now() - start) / 1000);
        counts.perSecond[second] = (counts.perSecond[second] ?? 0) + 1;
      } else counts.conflicts++;
    } catch {
      counts.threw++;
      refusedInRow++;
      counts.threwAt.push(Date.now());
    }
  }
}));
console.log(JSON.stringify(counts));
kv.close();
