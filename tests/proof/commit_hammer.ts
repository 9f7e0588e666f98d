/**
 * A process that commits checked writes to a shared KV file as fast as it can, as Shelf's meter
 * does under load: `deno run -A commit_hammer.ts KV_PATH START SECONDS`, starting at the epoch
 * millisecond START so that processes started one after another begin together. The store is
 * opened as Shelf opens it (config.ts openStore). Prints one JSON line: commits that landed, that
 * lost their check, that threw, that threw after the first second (once processes have met), and
 * how many landed in each second.
 */
import { openStore } from "../../config.ts";

const [path, startAt, seconds] = Deno.args;
const kv = await openStore(path);
const start = Number(startAt);
await new Promise((r) => setTimeout(r, Math.max(0, start - Date.now())));
const end = start + Number(seconds) * 1000;
const counts = { landed: 0, conflicts: 0, threw: 0, threwLate: 0, perSecond: [] as number[] };
const record = { pad: "x".repeat(700) };
await Promise.all(Array.from({ length: 32 }, async (_, i) => {
  const key = ["hammer", i % 20];
  while (Date.now() < end) {
    const current = await kv.get(key);
    try {
      const r = await kv.atomic().check(current).set(key, record).commit();
      if (r.ok) {
        counts.landed++;
        const second = Math.floor((Date.now() - start) / 1000);
        counts.perSecond[second] = (counts.perSecond[second] ?? 0) + 1;
      } else counts.conflicts++;
    } catch {
      counts.threw++;
      if (Date.now() - start > 1000) counts.threwLate++;
    }
  }
}));
console.log(JSON.stringify(counts));
kv.close();
