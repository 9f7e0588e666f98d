/**
 * What the stop tests hold a Shelf process with: credits held as by a call no abort reaches
 * (probe CH), and a request whose body never comes (probe BL).
 */
import { spawnShelf } from "./proof/shelf_process.ts";

/** Shelf on `kvPath` holding 3 credits of acc_never_ends from start-up until it stops. */
export function spawnHoldingCredits(kvPath: string, drainSeconds: string) {
  return spawnShelf({
    KV_PATH: kvPath,
    UPSTREAM: "origin:http://127.0.0.1:9",
    DRAIN_SECONDS: drainSeconds,
  }, { preload: new URL("./held_credits_trigger.ts", import.meta.url).pathname });
}

/**
 * Starts a sign-in form on `conn` whose body never comes, the client keeping the connection
 * open, and waits until the route is reading it.
 */
export async function sendUnendingBody(conn: Deno.Conn): Promise<void> {
  await conn.write(
    new TextEncoder().encode(
      "POST /dashboard/signin HTTP/1.1\r\nHost: a\r\n" +
        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nemail=",
    ),
  );
  await new Promise((r) => setTimeout(r, 300));
}
