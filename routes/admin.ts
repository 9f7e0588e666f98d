/**
 * The operator's admin API (INTERFACE.md), present only when ADMIN_TOKEN is set. The token is
 * compared in constant time. The CLI and the dashboard call the same Accounts functions.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import type { Deps } from "./deps.ts";
import { accountView, keyView, usageRecord } from "../metering/account_state.ts";
import { hashKey } from "../metering/api_key.ts";
import { operatorResetLink } from "../metering/password_reset.ts";
import { ApiError } from "../core/api_error.ts";
import type { AdminGuard } from "./admin_guard.ts";
import { pathSegment, queryValue } from "./query_params.ts";

/**
 * Refuses (401) a request without `Authorization: Bearer <ADMIN_TOKEN>`. Both sides are hashed
 * first, so the comparison takes the same time whatever the length or content of the guess.
 */
export function adminAuth(adminToken: string, guard?: AdminGuard): MiddlewareHandler {
  const expected = Buffer.from(hashKey(adminToken), "hex");
  return async (c, next) => {
    const who = guard?.admit(c);
    const m = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
    const given = Buffer.from(hashKey(m?.[1] ?? ""), "hex");
    if (!timingSafeEqual(given, expected)) {
      if (who !== undefined) guard!.failed(who);
      throw new ApiError(401, "unauthorized", "This needs Authorization: Bearer <ADMIN_TOKEN>.");
    }
    await next();
  };
}

export function adminRoutes(
  app: Hono,
  deps: Deps,
  adminToken: string,
  guard?: AdminGuard,
): void {
  const { accounts, plans } = deps;

  app.use("/admin/*", adminAuth(adminToken, guard));

  app.get(
    "/admin/parser-health",
    (c) =>
      c.json({
        generated_at: new Date(deps.clock.now()).toISOString(),
        pages: deps.metrics.health.report(deps.clock.now()),
      }),
  );

  app.post("/admin/accounts", async (c) => {
    const body = await jsonBody(c);
    const a = await accounts.create(body.email as string, (body.plan as string) ?? "free");
    return c.json(accountView(a), 201);
  });

  app.get("/admin/accounts", async (c) => {
    const page = await accounts.list({
      email: queryValue(c.req.url, "email"),
      cursor: queryValue(c.req.url, "cursor"),
    });
    return c.json({ accounts: page.accounts.map(accountView), next_cursor: page.next_cursor });
  });

  app.get("/admin/accounts/:id", async (c) => {
    const a = await accounts.get(pathSegment(c.req.path, 3));
    return c.json({ ...accountView(a), usage: usageRecord(a, plans.get(a.plan)) });
  });

  app.patch("/admin/accounts/:id", async (c) => {
    const body = await jsonBody(c);
    const a = await accounts.update(pathSegment(c.req.path, 3), {
      plan: body.plan as string | undefined,
      status: body.status as string | undefined,
    });
    return c.json({
      ...accountView(a),
      usage: usageRecord(a, plans.get(a.plan)),
      revoked_keys: a.revoked,
    });
  });

  app.post("/admin/accounts/:id/keys", async (c) => {
    const body = await jsonBody(c);
    const { key, value } = await accounts.createKey(pathSegment(c.req.path, 3), {
      mode: body.mode as string | undefined,
      name: body.name as string | undefined,
    });
    return c.json(createdKeyView(key, value), 201);
  });

  app.get("/admin/accounts/:id/keys", async (c) => {
    return c.json({ keys: (await accounts.listKeys(pathSegment(c.req.path, 3))).map(keyView) });
  });

  // A password link for the account's owner, handed over by the operator: without a mail server
  // the dashboard's sign-in had no way to a first password (probe FU).
  app.post("/admin/accounts/:id/reset-link", async (c) => {
    const a = await accounts.get(pathSegment(c.req.path, 3));
    return c.json(await operatorResetLink(deps.kv, a, deps.publicUrl, deps.clock.now()), 201);
  });

  app.delete("/admin/keys/:key_id", async (c) => {
    return c.json(keyView(await accounts.revokeKey(pathSegment(c.req.path, 3))));
  });
}

/** The only place a key's value is ever returned. */
export function createdKeyView(
  key: {
    id: string;
    prefix: string;
    last4: string;
    mode: string;
    name: string;
    created_at: number;
  },
  value: string,
) {
  return {
    id: key.id,
    key: value,
    prefix: key.prefix,
    last4: key.last4,
    mode: key.mode,
    name: key.name,
    created_at: new Date(key.created_at).toISOString(),
  };
}

async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await c.req.text();
  } catch {
    // A body cut short by the client, or not UTF-8 text: its answer, not an unhandled error.
    throw new ApiError(400, "invalid_json", "The request body could not be read.");
  }
  if (!text.trim()) return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === "object" && !Array.isArray(v)) return v;
  } catch { /* answered below */ }
  throw new ApiError(400, "invalid_json", "The request body must be a JSON object.");
}
