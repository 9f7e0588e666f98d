/**
 * Shelf as its operators run it: `deno run main.ts` in a child process with the settings of
 * INTERFACE.md, on a loopback port picked by the test (main.ts has no PORT=0). Its stdout and
 * stderr are kept whole, so that the secrets check can read every line the server wrote.
 */
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/**
 * The V8 flags `deno task start` runs with (deno.json), so that a spawned Shelf uses memory as an
 * operator's does. SHELF_V8_FLAGS, when set (even empty), replaces them, for side-by-side benches.
 */
export function startV8Flags(): string[] {
  const override = Deno.env.get("SHELF_V8_FLAGS");
  if (override !== undefined) return override ? [`--v8-flags=${override}`] : [];
  const config = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)));
  return String(config.tasks.start).split(/\s+/).filter((a) => a.startsWith("--v8-flags="));
}

/**
 * The runtime flags `deno task start` runs with: its V8 flags (as above) and `--quiet`, which
 * keeps Deno's own diagnostics (one line per HTTP/2 connection reset by its client) off stderr.
 */
export function startFlags(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)));
  const quiet = String(config.tasks.start).split(/\s+/).includes("--quiet");
  return [...(quiet ? ["--quiet"] : []), ...startV8Flags()];
}

export interface ShelfProcess extends AsyncDisposable {
  url: string;
  pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  logs(): string;
  /** SIGKILL: no shutdown hook, no flush; what a crash looks like. */
  crash(): Promise<void>;
  /** Sends `signal` and resolves with the exit code once the process has ended. */
  stop(signal?: Deno.Signal): Promise<number>;
}

/** A free loopback port: bind port 0, read the port, close. Racy in theory, fine on a test box. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

export interface SpawnOptions {
  /** The process's limit on open file descriptors (`ulimit -n`), as a unit file would set it. */
  fileLimit?: number;
  /** A module run before main.ts in the same process (`--preload`): tests' fault triggers. */
  preload?: string;
}

export async function spawnShelf(env: {
  KV_PATH: string;
  UPSTREAM: string;
  PLANS_FILE?: string;
  ADMIN_TOKEN?: string;
  [setting: string]: string | undefined;
}, opts: SpawnOptions = {}): Promise<ShelfProcess> {
  for (let attempt = 0;; attempt++) {
    try {
      return await spawnOnce(env, freePort(), opts);
    } catch (e) {
      // Another process may have taken the port between the probe and the bind.
      if (attempt >= 2) throw e;
    }
  }
}

/**
 * `count` processes on the same settings (one KV file shared), each pushed to `into` as it
 * starts, so that a caller's `finally` stops those started when a later one fails to.
 */
export async function spawnShelves(
  count: number,
  env: Parameters<typeof spawnShelf>[0],
  into: ShelfProcess[],
): Promise<ShelfProcess[]> {
  for (let i = 0; i < count; i++) into.push(await spawnShelf(env));
  return into;
}

async function spawnOnce(
  env: Record<string, string | undefined>,
  port: number,
  opts: SpawnOptions,
): Promise<ShelfProcess> {
  const vars: Record<string, string> = { PORT: String(port), HOST: "127.0.0.1", NO_COLOR: "1" };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) vars[k] = v;
  const preload = opts.preload ? ["--preload", opts.preload] : [];
  const deno = [Deno.execPath(), "run", "--allow-all", ...startFlags(), ...preload, MAIN];
  // The shell sets the limit and is replaced by Deno (exec): the pid is Shelf's.
  const [command, ...args] = opts.fileLimit === undefined
    ? deno
    : ["sh", "-c", `ulimit -n ${opts.fileLimit} && exec "$@"`, "sh", ...deno];
  const child = new Deno.Command(command, {
    args,
    env: vars,
    clearEnv: false,
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  let out = "";
  let listening: () => void;
  let matched = false;
  const ready = new Promise<void>((r) => (listening = r));
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      out += chunk;
      // Tested only until it matched: output grows to megabytes of access-log lines.
      if (!matched && /Shelf \S+ listening on /.test(out)) {
        matched = true;
        listening();
      }
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const status = child.status;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const started = await Promise.race([
    ready.then(() => true),
    status.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 30_000))),
  ]);
  clearTimeout(timer);
  let dead = false;
  const kill = async (signal: Deno.Signal) => {
    if (!dead) {
      dead = true;
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    }
    const { code } = await status;
    await drained;
    return code;
  };
  if (!started) {
    await kill("SIGKILL");
    throw new Error(`Shelf did not start on port ${port}:\n${out}`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    logs: () => out,
    crash: async () => void await kill("SIGKILL"),
    stop: (signal = "SIGTERM") => kill(signal),
    [Symbol.asyncDispose]: async () => void await kill("SIGTERM"),
  };
}

/**
 * `deno run` of main.ts or the admin CLI (`script`, from the checkout's root) on a store, expected
 * to end by itself (a refused start, a CLI command): its exit code and output.
 */
export function runToEnd(
  script: "main.ts" | "cli/admin.ts",
  kvPath: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runScript(script, { KV_PATH: kvPath }, args);
}

/** main.ts started on settings it must refuse (`vars` over loopback ones): its exit and output. */
export function startFails(
  vars: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runScript("main.ts", vars, []);
}

async function runScript(script: string, vars: Record<string, string>, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", script, ...args],
    cwd: new URL("../..", import.meta.url).pathname,
    env: {
      PORT: String(freePort()),
      HOST: "127.0.0.1",
      UPSTREAM: "origin:http://127.0.0.1:9",
      NO_COLOR: "1",
      ...vars,
    },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}
