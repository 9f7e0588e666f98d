/**
 * Raw HTTP/1.1 over TCP for tests of request bodies: a request whose chunked body starts and
 * never ends, so that a server's body deadline and bounds can be seen.
 */

export interface Unfinished {
  conn: Deno.TcpConn;
  /** The status line's code once an answer comes; -1 for no HTTP answer, 0 for none. */
  answer: Promise<number>;
  close(): void;
}

/** Sends a request whose chunked body starts and never ends; the connection stays open. */
export async function unfinished(
  url: string,
  path: string,
  headers: string[],
): Promise<Unfinished> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(url).port) });
  const head = [`POST ${path} HTTP/1.1`, "Host: a", ...headers, "Transfer-Encoding: chunked"];
  await conn.write(new TextEncoder().encode(`${head.join("\r\n")}\r\n\r\n5\r\nemail\r\n`));
  const buf = new Uint8Array(4096);
  const answer = conn.read(buf).then((n) => {
    if (n === null) return 0;
    const m = /^HTTP\/1\.1 (\d{3})/.exec(new TextDecoder().decode(buf.subarray(0, n)));
    return m ? Number(m[1]) : -1;
  }, () => 0);
  return {
    conn,
    answer,
    close() {
      try {
        conn.close();
      } catch { /* closed */ }
    },
  };
}

/** The status of the answer, or null when none came within `ms` (the connection stays open). */
export async function statusWithin(u: Unfinished, ms: number): Promise<number | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)));
  const got = await Promise.race([u.answer, late]);
  clearTimeout(timer);
  return got;
}

/** The dashboard's sign-in form's content type, whose bodies the server reads under its bounds. */
export const FORM = "Content-Type: application/x-www-form-urlencoded";

/**
 * Sign-in forms whose bodies never end, each from client address `ip` (behind one trusted proxy).
 * A body being read gets no answer while it is held open: after `heldMs` without one it is taken
 * as read and kept in `held`. A refused one is answered at once, and is waited for as long as a
 * slow machine may need. `send` gives the status, or null for a body held.
 */
export function heldForms(url: string, heldMs: number) {
  const held: Unfinished[] = [];
  const send = async (ip: string, expectRefusal: boolean) => {
    const u = await unfinished(url, "/dashboard/signin", [FORM, `X-Forwarded-For: ${ip}`]);
    const status = await statusWithin(u, expectRefusal ? 5_000 : heldMs);
    if (status === null) held.push(u);
    else u.close();
    return status;
  };
  return { held, send };
}
