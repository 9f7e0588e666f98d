/**
 * The request id is on every response, including one whose headers cannot be changed (a
 * `Response.redirect`, a `Response.error` or a fetched response that a handler passes on): no
 * route sends one today, and the copy made for it had lost the header (probe ID).
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { requestLog } from "../routes/access_log.ts";
import { Metrics } from "../core/metrics.ts";

Deno.test("a response with immutable headers still carries the request id, kept or made", async () => {
  const lines: Record<string, unknown>[] = [];
  const app = new Hono();
  app.use("*", requestLog({ log: (l) => lines.push(l), metrics: new Metrics() }));
  app.get("/r", () => Response.redirect("http://127.0.0.1/elsewhere", 302));
  const kept = await app.request("/r", { headers: { "x-request-id": "req-ghij" } });
  assert.equal(kept.status, 302);
  assert.equal(kept.headers.get("location"), "http://127.0.0.1/elsewhere");
  assert.equal(kept.headers.get("x-request-id"), "req-ghij");
  const made = await app.request("/r");
  const id = made.headers.get("x-request-id");
  assert.match(id ?? "", /^[A-Za-z0-9._-]{1,64}$/);
  assert.deepEqual(lines.map((l) => l.request_id), ["req-ghij", id]);
});
