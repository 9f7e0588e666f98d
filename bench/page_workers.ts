/**
 * Page workers (issue 15): a spawned Shelf (`deno run main.ts`, as operators run it) whose
 * upstream is the loopback fake marketplace serving a real product page under thousands of
 * ASINs, with `PARSE_WORKERS=0` against the default (one per core), in alternating runs:
 * - uncached details calls/s with 16 concurrent clients, each call a new ASIN;
 * - CPU of the Shelf process per uncached call (all its threads, from /proc);
 * - the p50 of a cached hit while those misses run, against a cached hit alone;
 * - the process's RSS once it has settled: the median over the second half of a 30 s run of the
 *   same load (RSS still climbs for 10-20 s after the load starts, as V8's heaps grow to their
 *   working size), and its peak.
 */
import { FakeMarketplace } from "../tests/fake_marketplace.ts";
import { spawnShelf, startV8Flags } from "../tests/proof/shelf_process.ts";
import { plansFile } from "../tests/proof/plans_file.ts";
import { createAccount } from "../tests/proof/admin_client.ts";
import { median } from "./median.ts";
import { cpuMs, peakRssMiB, rssMiB } from "./process_stats.ts";
import { removeKvFiles } from "../core/kv_files.ts";

/** The corpus's median-size product page (780 KB, 2017) and a 2026 one (1.5 MB). */
const PAGES = [
  "product/amazon.com__weih-earphone1.html",
  "product/amazon.com__pricechecker-charmast-powerbank.html",
];
const CLIENTS = 16;
const SECONDS = 5;
/** The length of the run that measures RSS; its second half is taken as settled. */
const STEADY_SECONDS = 30;
/**
 * More ASINs than any run asks for, so that each call of a run is a new one: with 4,000, the
 * 30 s run (about 190 calls/s here) asked for its first ASINs again after 21 s, answered from the
 * result cache for the rest of its settled half.
 */
const ASINS = 16_000;

interface Run {
  workers: string;
  callsPerSec: number;
  cpuMsPerCall: number;
  hitAloneMs: number;
  hitUnderLoadMs: number;
  peakRssMiB: number;
  steadyRssMiB: number;
}

const asin = (i: number) => `B0${String(i).padStart(8, "0")}`;

async function get(url: string, key: string): Promise<number> {
  const t = performance.now();
  const r = await fetch(url, { headers: { "x-api-key": key } });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
  return performance.now() - t;
}

async function oneRun(
  fake: FakeMarketplace,
  workers: string,
  offset: number,
  seconds = SECONDS,
): Promise<Run> {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const plans = await plansFile(10_000_000, 100_000);
  const token = crypto.randomUUID();
  await using shelf = await spawnShelf({
    KV_PATH: kvPath,
    UPSTREAM: fake.upstream,
    PLANS_FILE: plans,
    ADMIN_TOKEN: token,
    PARSE_WORKERS: workers === "default" ? undefined : workers,
  });
  try {
    const { key } = await createAccount(shelf.url, token);
    // Each run is a fresh process with its own caches: ASINs may repeat across runs, not within one.
    const url = (i: number) => `${shelf.url}/v1/products/details?asin=${asin(i % ASINS)}`;
    // Warm-up: JIT, workers started, the cached ASIN in the result cache.
    let next = offset;
    await Promise.all(Array.from({ length: 8 }, () => get(url(next++), key)));
    const cached = url(offset);
    const alone: number[] = [];
    for (let i = 0; i < 30; i++) alone.push(await get(cached, key));

    const cpu0 = cpuMs(shelf.pid);
    const t0 = performance.now();
    let done = 0;
    const stopAt = t0 + seconds * 1000;
    const underLoad: number[] = [];
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < stopAt) {
        await get(url(next++), key);
        done++;
      }
    });
    const probe = (async () => {
      while (performance.now() < stopAt) {
        underLoad.push(await get(cached, key));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const rss: number[] = [];
    const sampler = (async () => {
      while (performance.now() < stopAt) {
        await new Promise((r) => setTimeout(r, 250));
        if (performance.now() - t0 >= (seconds * 1000) / 2) rss.push(rssMiB(shelf.pid));
      }
    })();
    await Promise.all([...clients, probe, sampler]);
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = cpuMs(shelf.pid) - cpu0;
    return {
      workers,
      callsPerSec: done / elapsed,
      cpuMsPerCall: cpu / done,
      hitAloneMs: median(alone),
      hitUnderLoadMs: median(underLoad),
      peakRssMiB: peakRssMiB(shelf.pid),
      steadyRssMiB: median(rss),
    };
  } finally {
    await Deno.remove(plans).catch(() => {});
    await removeKvFiles(kvPath);
  }
}

/** `only`, when given, picks the pages whose names contain it. */
export async function benchPageWorkers(rounds = 2, only = ""): Promise<void> {
  for (const page of PAGES.filter((p) => p.includes(only))) await benchPage(page, rounds);
}

async function benchPage(PAGE: string, rounds: number): Promise<void> {
  await using fake = new FakeMarketplace();
  for (let i = 0; i < ASINS; i++) fake.page(`https://www.amazon.com/dp/${asin(i)}`, PAGE);
  const runs: Run[] = [];
  let offset = 0;
  for (let r = 0; r < rounds; r++) {
    for (const workers of ["0", "default"]) {
      runs.push(await oneRun(fake, workers, offset));
      offset += ASINS / 4;
    }
  }
  const settled: Run[] = [];
  for (const workers of ["0", "default"]) {
    settled.push(await oneRun(fake, workers, offset, STEADY_SECONDS));
    offset += ASINS / 4;
  }
  const of = (w: string, f: (r: Run) => number, from = runs) =>
    median(from.filter((r) => r.workers === w).map(f));
  const cores = navigator.hardwareConcurrency;
  console.log(
    `page workers (spawned main.ts, fake marketplace on loopback, ${PAGE.split("/")[1]}; ` +
      `${CLIENTS} clients, ${SECONDS} s, medians of ${rounds} alternating runs; ${cores} cores; ` +
      `V8 flags: ${startV8Flags().join(" ") || "none"}):`,
  );
  const row = (name: string, f: (r: Run) => number, unit: string, digits = 1, from = runs) => {
    const inline = of("0", f, from), pool = of("default", f, from);
    console.log(
      `  ${name.padEnd(34)} PARSE_WORKERS=0 ${inline.toFixed(digits).padStart(7)} ${unit}` +
        `   default (${cores}) ${pool.toFixed(digits).padStart(7)} ${unit}   ratio ${
          (pool / inline).toFixed(2)
        }`,
    );
  };
  row("uncached details calls/s", (r) => r.callsPerSec, "/s");
  row("CPU per uncached call (process)", (r) => r.cpuMsPerCall, "ms");
  row("cached hit p50, alone", (r) => r.hitAloneMs, "ms", 2);
  row("cached hit p50, while misses run", (r) => r.hitUnderLoadMs, "ms", 2);
  const rss = `RSS settled (${STEADY_SECONDS} s run, 2nd half)`;
  row(rss, (r) => r.steadyRssMiB, "MiB", 0, settled);
  row(`peak RSS (${STEADY_SECONDS} s run)`, (r) => r.peakRssMiB, "MiB", 0, settled);
}

if (import.meta.main) await benchPageWorkers(Number(Deno.args[0] ?? 2), Deno.args[1]);
