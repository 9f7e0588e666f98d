/**
 * Gateway benchmark: requests/s and p50/p99 latency of a metered data call against bare Hono,
 * both loaded by wrk in the same run. Target: metered ≥ 0.5 × bare.
 */
import { median } from "./median.ts";
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
}

/** Starts a benchmark server script; its first stdout line is JSON describing it. */
export async function startServer<Info = { url: string; key?: string }>(
  script: string,
  ...args: string[]
): Promise<{ proc: Deno.ChildProcess; info: Info }> {
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL(script, import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${script} exited before listening`);
    buf += value;
  }
  reader.releaseLock();
  return { proc, info: JSON.parse(buf.split("\n")[0]) };
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text);
  if (!m) return NaN;
  const n = parseFloat(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : n;
}

export async function wrk(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  connections = 64,
): Promise<LoadResult> {
  const args = ["-t2", `-c${connections}`, `-d${seconds}s`, "--latency"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  const out = await new Deno.Command("wrk", {
    args: [...args, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  if (non2xx) throw new Error(`wrk saw ${non2xx[1]} error responses:\n${text}`);
  return {
    rps: parseFloat(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? "NaN"),
    p50: ms(/\s50%\s+(\S+)/.exec(text)?.[1] ?? ""),
    p99: ms(/\s99%\s+(\S+)/.exec(text)?.[1] ?? ""),
  };
}

export async function haveWrk(): Promise<boolean> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}

export interface GatewayResult {
  bare: LoadResult;
  deferred: LoadResult;
  durable: LoadResult;
  metered: LoadResult;
}

function medianResult(runs: LoadResult[]): LoadResult {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
  };
}

/**
 * Bare Hono, the two references of reference_server.ts and the metered call, each loaded in
 * turn for `seconds` per round over `rounds` rounds; each figure is the median of its rounds.
 * Interleaving matters on a shared machine, whose speed drifts by a third within a minute: one
 * long run of each would compare two different machines.
 */
export async function benchGateway(
  rounds = 5,
  seconds = 2,
  connections = 64,
): Promise<GatewayResult> {
  const servers = {
    bare: await startServer("./bare_server.ts"),
    deferred: await startServer("./reference_server.ts"),
    durable: await startServer("./reference_server.ts", "durable"),
    metered: await startServer("./metered_server.ts"),
  };
  const load = (name: keyof typeof servers, secs: number) => {
    const { url, key } = servers[name].info;
    return wrk(url, key ? { "x-api-key": key } : {}, secs, connections);
  };
  try {
    const names = Object.keys(servers) as (keyof typeof servers)[];
    for (const name of names) await load(name, 1); // warm-up, so JIT state is alike
    const runs = Object.fromEntries(names.map((n) => [n, [] as LoadResult[]])) as Record<
      keyof typeof servers,
      LoadResult[]
    >;
    for (let r = 0; r < rounds; r++) {
      for (const name of names) runs[name].push(await load(name, seconds));
    }
    return {
      bare: medianResult(runs.bare),
      deferred: medianResult(runs.deferred),
      durable: medianResult(runs.durable),
      metered: medianResult(runs.metered),
    };
  } finally {
    for (const { proc } of Object.values(servers)) {
      proc.kill("SIGTERM");
      await proc.status;
    }
  }
}
