/**
 * The operator is told about a client guessing the admin token at most once a minute per client
 * (routes/admin_guard.ts), also when its failures fill a second window right after the first.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { AdminGuard } from "../routes/admin_guard.ts";
import { ApiError, errorResponse } from "../core/api_error.ts";
import { ManualClock } from "../metering/clock.ts";

/** README (ADMIN_TOKEN): "a client ... with 20 failed tries in a minute is refused 429". */
const MAX_FAILURES = 20;
const TOKEN = "guard-notice-test-admin-token-0123456789";

Deno.test("a client guessing across a window boundary is reported once a minute, not once a window", async () => {
  const clock = new ManualClock(1_000_000);
  const told: Record<string, unknown>[] = [];
  const guard = new AdminGuard(1, (line) => told.push(line), () => clock.now());
  const app = new Hono();
  app.onError((e) =>
    e instanceof ApiError ? errorResponse(e) : new Response("boom", { status: 500 })
  );
  app.get("/admin", (c) => {
    const who = guard.admit(c);
    if (c.req.header("authorization") !== `Bearer ${TOKEN}`) {
      guard.failed(who);
      return c.text("no", 401);
    }
    return c.text("ok");
  });
  const admin = async (token: string, from = "198.51.100.7") => {
    const r = await app.request("/admin", {
      headers: { authorization: `Bearer ${token}`, "x-forwarded-for": from },
    });
    await r.body?.cancel();
    return r.status;
  };
  for (let i = 0; i < MAX_FAILURES - 1; i++) assert.equal(await admin(`guess-${i}`), 401);
  assert.equal(told.length, 0);
  clock.advance(59_000);
  assert.equal(await admin("guess-19"), 401);
  assert.equal(told.length, 1, "told at the 20th failure");
  assert.equal(told[0].client, "198.51.100.7");
  assert.equal(await admin(TOKEN), 429);
  clock.advance(1_000); // a new window: admitted again, and guessing again at once
  for (let i = 0; i < MAX_FAILURES; i++) {
    if (i === 10) clock.advance(1_000);
    assert.equal(await admin(`again-${i}`), 401);
  }
  assert.equal(await admin(TOKEN), 429, "held again");
  assert.equal(told.length, 1, "not told again two seconds after the last report");
  // Another client is reported on its own.
  for (let i = 0; i < MAX_FAILURES; i++) assert.equal(await admin(`x-${i}`, "203.0.113.9"), 401);
  assert.equal(told.length, 2);
  assert.equal(told[1].client, "203.0.113.9");
  // A minute after the first report, the first client's next full window is reported again.
  clock.advance(60_000);
  for (let i = 0; i < MAX_FAILURES; i++) assert.equal(await admin(`third-${i}`), 401);
  assert.equal(told.length, 3);
  assert.equal(told[2].client, "198.51.100.7");
});
