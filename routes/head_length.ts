/**
 * HEAD answered with the length GET would send (RFC 9110 §9.3.2): Hono answers HEAD by running
 * the GET route and dropping its body, and the runtime then said `Content-Length: 0` where GET
 * sends 15 bytes or 3 KB (probe FD). Only HEAD pays for it: the answer's body is read for its
 * length.
 */
import type { MiddlewareHandler } from "hono";

export function headLength(): MiddlewareHandler {
  return (c, next) => {
    if (c.req.method !== "HEAD") return next();
    return next().then(async () => {
      const res = c.res;
      if (!res.body || res.headers.has("content-length")) return;
      const length = (await res.arrayBuffer()).byteLength;
      const headers = new Headers(res.headers);
      headers.set("content-length", String(length));
      c.res = new Response(null, { status: res.status, statusText: res.statusText, headers });
    });
  };
}
