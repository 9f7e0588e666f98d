/**
 * Guessing the admin token (routes/admin_guard.ts): past 20 failed tries in a minute a client's
 * admin requests are refused with 429 before any token is compared, the right token included,
 * other clients are not, and the operator is told once with the client's address. The token is
 * never logged, wherever a client puts it.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { Hono } from "hono";
import { AdminGuard } from "../routes/admin_guard.ts";
import { ApiError, errorResponse } from "../core/api_error.ts";
import { ManualClock } from "../metering/clock.ts";

/** README (ADMIN_TOKEN): "a client ... with 20 failed tries in a minute is refused 429". */
const MAX_FAILURES = 20;

const TOKEN = "guard-test-admin-token-0123456789";

Deno.test("a client guessing the admin token is refused 429 past its failures; others are not; the operator is told once", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({
    adminToken: TOKEN,
    trustProxy: 1,
    accessLog: (l) => void lines.push(l),
  });
  const admin = async (from: string, token: string, path = "/admin/accounts") => {
    const r = await fetch(`${s.url}${path}`, {
      headers: { authorization: `Bearer ${token}`, "x-forwarded-for": from },
    });
    await r.body?.cancel();
    return r;
  };
  for (let i = 0; i < MAX_FAILURES; i++) {
    assert.equal((await admin("198.51.100.7", `guess-${i}-0123456789abcdef`)).status, 401);
  }
  const refused = await admin("198.51.100.7", TOKEN);
  assert.equal(refused.status, 429, "even the right token, once over the failures");
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  assert.equal((await admin("198.51.100.7", "x", "/metrics")).status, 429, "/metrics too");
  assert.equal((await admin("203.0.113.9", TOKEN)).status, 200, "another client is not held");
  // IPv6 clients count by their /48: other /64s of it are held too.
  for (let i = 0; i < MAX_FAILURES; i++) {
    assert.equal(
      (await admin(`2001:db8:7:${i.toString(16)}::1`, `guess-${i}-0123456789`)).status,
      401,
    );
  }
  assert.equal((await admin("2001:db8:7:ffff::1", TOKEN)).status, 429);
  assert.equal((await admin("2001:db8:8::1", TOKEN)).status, 200);
  const told = lines.filter((l) => l.event === "admin_auth_failures");
  assert.equal(told.length, 2, JSON.stringify(told));
  assert.equal(told[0].client, "198.51.100.7");
  assert.equal(told[1].client, "2001:db8:7::/48");
});

Deno.test("the admin token is not logged, whatever query parameter or path carries it", async () => {
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({ adminToken: TOKEN, accessLog: (l) => void lines.push(l) });
  for (
    const path of [
      `/admin/accounts?access_token=${TOKEN}`,
      `/admin/accounts?admin_token=${TOKEN}`,
      `/admin/accounts?key=${TOKEN}`,
      `/admin/accounts/${TOKEN}`,
      `/v1/usage?authorization=Bearer%20${TOKEN}`,
      // Pasted short by a character at either end (probe DG: one character left to guess).
      `/admin/accounts?t=${TOKEN.slice(0, -1)}`,
      `/admin/accounts/${TOKEN.slice(1)}`,
      // A line break, space or zero-width space inside it, as a copied line has (probe DI).
      `/admin/accounts?t=${TOKEN.slice(0, 12)}%0A${TOKEN.slice(12)}`,
      `/admin/accounts?t=${TOKEN.slice(0, 12)}%20${TOKEN.slice(12, -1)}`,
      `/admin/accounts?t=${TOKEN.slice(0, 12)}%E2%80%8B${TOKEN.slice(12)}`,
    ]
  ) {
    const r = await fetch(`${s.url}${path}`);
    await r.body?.cancel();
  }
  const text = JSON.stringify(lines);
  assert.equal(lines.length, 10);
  assert.ok(!text.includes(TOKEN.slice(1, -1)), text);
  assert.ok(!text.includes(TOKEN.slice(0, 16)), text);
  assert.ok(!text.includes(TOKEN.slice(-16)), text);
  assert.ok(!text.includes(TOKEN.slice(12, -1)), text);
});

/**
 * An admin route behind `guard` (one trusted proxy), as routes/admin.ts places it: a request from
 * `from` with `token`, answered 401 for a wrong token and counted as a failure.
 */
function guardedAdmin(guard: AdminGuard) {
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
  return async (token: string, from = "198.51.100.7") => {
    const r = await app.request("/admin", {
      headers: { authorization: `Bearer ${token}`, "x-forwarded-for": from },
    });
    await r.body?.cancel();
    return r;
  };
}

Deno.test("a client held for guessing is admitted again once its one-minute window has passed", async () => {
  let now = 1_000_000;
  const admin = guardedAdmin(new AdminGuard(1, () => {}, () => now));
  for (let i = 0; i < MAX_FAILURES; i++) assert.equal((await admin(`guess-${i}`)).status, 401);
  now += 30_000;
  const held = await admin(TOKEN);
  assert.equal(held.status, 429, "still held inside the minute");
  assert.equal(held.headers.get("retry-after"), "30");
  now += 30_000; // the window that began with the first failure has ended
  assert.equal((await admin(TOKEN)).status, 200, "admitted once the minute is over");
  // A fresh window: one wrong guess holds nothing, twenty hold the client again.
  assert.equal((await admin("again-0")).status, 401);
  assert.equal((await admin(TOKEN)).status, 200, "one failure in a new window holds nothing");
  for (let i = 1; i < MAX_FAILURES; i++) assert.equal((await admin(`again-${i}`)).status, 401);
  assert.equal((await admin(TOKEN)).status, 429, "guessing again after the minute is held again");
  now += 10 * 60_000;
  assert.equal((await admin(TOKEN)).status, 200, "and admitted once that minute is over too");
});

Deno.test("a client guessing across a window boundary is reported once a minute, not once a window", async () => {
  const clock = new ManualClock(1_000_000);
  const told: Record<string, unknown>[] = [];
  const call = guardedAdmin(new AdminGuard(1, (line) => told.push(line), () => clock.now()));
  const admin = async (token: string, from?: string) => (await call(token, from)).status;
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
