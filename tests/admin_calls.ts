/**
 * The operator's two ways in, as tests drive them: the admin API over HTTP with its bearer token,
 * and the admin CLI run directly as a child process (not through `deno task`, so that a signal
 * sent to the child reaches the command itself).
 */

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
