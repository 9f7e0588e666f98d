/**
 * The operator's two ways in, as tests drive them: the admin API over HTTP with its bearer token,
 * and the admin CLI as a child process, through `deno task admin` as an operator types it, or
 * run directly (ADMIN) so that a signal sent to the child reaches the command itself.
 */
import { removeKvFiles } from "../core/kv_files.ts";

/** The repository's root, where the admin CLI runs. */
export const ROOT = new URL("..", import.meta.url).pathname;

/** The admin task's own command line (deno.json), without the task runner. */
export const ADMIN = [
  "run",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "cli/admin.ts",
];

/** A caller of the admin API of the server at `s.url` with `token`: status and parsed body. */
export function adminApi(token: string) {
  return async (s: { url: string }, method: string, path: string, body?: unknown) => {
    const r = await fetch(s.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  };
}

/** `deno task admin ARGS` on the store at `kvPath`: its exit code and what it printed. */
export function adminTask(kvPath: string, ...args: string[]) {
  return adminTaskEnv(kvPath, {}, ...args);
}

/** `deno task admin ARGS` on `kvPath` with `env` on top of this process's; null unsets a name. */
export async function adminTaskEnv(
  kvPath: string,
  env: Record<string, string | null>,
  ...args: string[]
) {
  const vars: Record<string, string> = { ...Deno.env.toObject(), KV_PATH: kvPath, NO_COLOR: "1" };
  for (const [name, value] of Object.entries(env)) {
    if (value === null) delete vars[name];
    else vars[name] = value;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: ROOT,
    env: vars,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** Runs `use` on a new store file, removed afterwards with its SQLite side files. */
export async function withStore(use: (kvPath: string) => Promise<void>): Promise<void> {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    await use(kvPath);
  } finally {
    await removeKvFiles(kvPath);
  }
}
