/**
 * Metering spread (issue 15.3): calls/s and CPU per call of the metered gateway when every call
 * is one hot account's, when calls spread over ACCOUNTS accounts (a random one each call), and
 * when they rotate over the fifty keys of one account, in alternating rounds against one server
 * process (bench/spread_server.ts). The load comes from this process's fetch at 64 concurrent
 * calls, a key picked at random for each, so absolute figures are the loader's; the ratios are
 * the point (wrk with a script picking the key gave the same ratios, 0.34–0.57 over four pairs).
 */
import { median } from "./median.ts";
import { startServer } from "./gateway.ts";
import { cpuMs } from "./process_stats.ts";

const SECONDS = 4;
const CONCURRENCY = 64;

async function load(url: string, keyOf: () => string, pid: number) {
  const stopAt = performance.now() + SECONDS * 1000;
  const cpu0 = cpuMs(pid);
  let done = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < stopAt) {
      const r = await fetch(url, { headers: { "x-api-key": keyOf() } });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`status ${r.status}`);
      done++;
    }
  }));
  return { rps: done / SECONDS, cpuUs: ((cpuMs(pid) - cpu0) * 1000) / done };
}

export async function benchMeteringSpread(rounds = 3): Promise<void> {
  const accounts = Number(Deno.env.get("BENCH_ACCOUNTS") ?? 10_000);
  Deno.env.set("BENCH_ACCOUNTS", String(accounts));
  const { proc, info } = await startServer<{
    url: string;
    hot: string;
    spread: string[];
    fifty: string[];
  }>("./spread_server.ts");
  const ref = await startServer<{ url: string; keys: string[] }>("./spread_reference_server.ts");
  const pick = (keys: string[]) => () => keys[Math.floor(Math.random() * keys.length)];
  const modes: [string, () => string, string, number][] = [
    ["one hot account", () => info.hot, info.url, proc.pid],
    [`${accounts} accounts`, pick(info.spread), info.url, proc.pid],
    ["one account, 50 keys", pick(info.fifty), info.url, proc.pid],
    [`reference, ${accounts}`, pick(ref.info.keys), ref.info.url, ref.proc.pid],
  ];
  const results = new Map<string, { rps: number[]; cpu: number[] }>();
  try {
    // Warm-up: every key once is not affordable for 10k; a second of each mode is.
    for (const [, keyOf, url, pid] of modes) await load(url, keyOf, pid);
    for (let r = 0; r < rounds; r++) {
      for (const [name, keyOf, url, pid] of modes) {
        const x = await load(url, keyOf, pid);
        const e = results.get(name) ?? { rps: [], cpu: [] };
        e.rps.push(x.rps);
        e.cpu.push(x.cpuUs);
        results.set(name, e);
      }
    }
  } finally {
    for (const p of [proc, ref.proc]) {
      p.kill("SIGTERM");
      await p.status;
    }
  }
  const hot = results.get(modes[0][0])!;
  const hotRps = median(hot.rps), hotCpu = median(hot.cpu);
  console.log(
    `metering spread (metered offers calls, data answered at once, ${CONCURRENCY} concurrent fetches, ` +
      `medians of ${rounds} alternating ${SECONDS} s rounds; KV file):`,
  );
  for (const [name] of modes) {
    const e = results.get(name)!;
    const rps = median(e.rps), cpu = median(e.cpu);
    console.log(
      `  ${name.padEnd(22)} ${rps.toFixed(0).padStart(7)} calls/s (${
        (rps / hotRps).toFixed(2)
      } × hot)` +
        `   server CPU ${cpu.toFixed(0).padStart(5)} µs/call (${(cpu / hotCpu).toFixed(2)} × hot)`,
    );
  }
  const spread = median(results.get(modes[1][0])!.rps);
  const reference = median(results.get(modes[3][0])!.rps);
  console.log(
    `  ${accounts} accounts / reference: ${(spread / reference).toFixed(2)}` +
      "   (reference: bare Hono writing one account-sized record per call, grouped and checked" +
      " as the meter does; no metering: the store's ceiling for spread calls)",
  );
}

if (import.meta.main) await benchMeteringSpread();
