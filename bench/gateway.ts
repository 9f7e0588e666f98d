/**
 * Gateway benchmark: requests/s and p50/p99 latency of a metered data call against bare Hono,
 * both loaded by wrk in the same run. Target: metered ≥ 0.5 × bare.
 */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
}

async function startServer(script: string): Promise<{ proc: Deno.ChildProcess; info: { url: string; key?: string } }> {
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL(script, import.meta.url).pathname],
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

export async function wrk(url: string, headers: Record<string, string>, seconds: number, connections = 64): Promise<LoadResult> {
  const args = ["-t2", `-c${connections}`, `-d${seconds}s`, "--latency"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  const out = await new Deno.Command("wrk", { args: [...args, url], stdout: "piped", stderr: "piped" }).output();
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

export async function benchGateway(seconds = 5, connections = 64): Promise<{ bare: LoadResult; metered: LoadResult }> {
  const bare = await startServer("./bare_server.ts");
  const metered = await startServer("./metered_server.ts");
  try {
    await wrk(bare.info.url, {}, 1); // warm-up of both, so JIT state is alike
    await wrk(metered.info.url, { "x-api-key": metered.info.key! }, 1);
    const b = await wrk(bare.info.url, {}, seconds, connections);
    const m = await wrk(metered.info.url, { "x-api-key": metered.info.key! }, seconds, connections);
    return { bare: b, metered: m };
  } finally {
    for (const p of [bare.proc, metered.proc]) {
      p.kill("SIGTERM");
      await p.status;
    }
  }
}
