/**
 * Edges of the admin API (README "Admin API refusals"): the Authorization header must be exactly
 * `Bearer <ADMIN_TOKEN>`, on every admin route, the key revoke included; a body must be a JSON
 * object, an array is refused as the other non-objects are; and an account's usage is read against
 * its own plan.
 */
import assert from "node:assert/strict";
import { adminApi } from "./admin_calls.ts";
import { startServer } from "./test_server.ts";
import { builtinPlans } from "../metering/plans.ts";

const TOKEN = "admin-edges-test-token-0123456789";

const admin = adminApi(TOKEN);

/** A request with the given Authorization header (none when null): status and parsed body. */
async function withAuth(
  s: { url: string },
  method: string,
  path: string,
  authorization: string | null,
  body?: unknown,
) {
  const headers = new Headers({ "content-type": "application/json" });
  if (authorization !== null) headers.set("authorization", authorization);
  const r = await fetch(s.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

Deno.test("admin API: an Authorization header holding the token among other text is refused 401, and creates nothing", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  // The right token, but not as the whole header: a proxy or client that adds to it, or a token
  // pasted into another scheme, is not the operator's `Bearer <token>`.
  const headers = [`Bearer ${TOKEN} extra`, `xBearer ${TOKEN}`, `Basic x Bearer ${TOKEN}`];
  for (const h of headers) {
    const listed = await withAuth(s, "GET", "/admin/accounts", h);
    assert.equal(listed.status, 401, h);
    assert.equal(listed.body.error.code, "unauthorized", h);
    const made = await withAuth(s, "POST", "/admin/accounts", h, { email: "junk@example.com" });
    assert.equal(made.status, 401, h);
    assert.equal(made.body.error.code, "unauthorized", h);
  }
  // The scheme's case does not matter; the header alone, as the README writes it, is taken.
  for (const h of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`]) {
    assert.equal((await withAuth(s, "GET", "/admin/accounts", h)).status, 200, h);
  }
  const none = await admin(s, "GET", "/admin/accounts?email=junk@example.com");
  assert.deepEqual(none.body, { accounts: [], next_cursor: null }, "no account was made");
});

Deno.test("admin API: revoking a key without the admin token, or with a wrong one, is 401 and the key keeps working", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const { id, key, keyId } = await s.account("starter");
  // A key revoke is an /admin route like the others: anyone who can reach the port could
  // otherwise switch off a paying customer's key.
  for (
    const h of [null, "Bearer wrong-admin-token-0123456789", `Basic ${btoa(`admin:${TOKEN}`)}`]
  ) {
    const r = await withAuth(s, "DELETE", `/admin/keys/${keyId}`, h);
    assert.equal(r.status, 401, String(h));
    assert.equal(r.body.error.code, "unauthorized", String(h));
  }
  const keys = await admin(s, "GET", `/admin/accounts/${id}/keys`);
  assert.deepEqual(keys.body.keys.map((k: { status: string }) => k.status), ["active"]);
  const usage = await s.get("/v1/usage", key);
  assert.equal(usage.status, 200, "the key still works");
  await usage.body?.cancel();
  // With the token the same request revokes it.
  const revoked = await admin(s, "DELETE", `/admin/keys/${keyId}`);
  assert.deepEqual([revoked.status, revoked.body.status], [200, "revoked"]);
  const refused = await s.get("/v1/usage", key);
  assert.equal(refused.status, 401);
  await refused.body?.cancel();
});

Deno.test("admin API: a JSON body that is not an object, an array included, is 400 invalid_json and changes nothing", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const { id } = await s.account("starter");
  const raw = async (method: string, path: string, text: string) => {
    const r = await fetch(s.url + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: text,
    });
    return { status: r.status, body: await r.json() };
  };
  const bodies = ["[]", '[{"email":"arr@example.com"}]', '["growth"]', "1", '"x"', "null", "true"];
  for (const text of bodies) {
    for (
      const [method, path] of [
        ["POST", "/admin/accounts"],
        ["PATCH", `/admin/accounts/${id}`],
        ["POST", `/admin/accounts/${id}/keys`],
      ]
    ) {
      const r = await raw(method, path, text);
      assert.equal(r.status, 400, `${method} ${path} ${text}`);
      assert.equal(r.body.error.code, "invalid_json", `${method} ${path} ${text}`);
    }
  }
  const keys = await admin(s, "GET", `/admin/accounts/${id}/keys`);
  assert.equal(keys.body.keys.length, 1, "no key was made");
  const listed = await admin(s, "GET", "/admin/accounts?email=arr@example.com");
  assert.deepEqual(listed.body.accounts, [], "no account was made");
  // An empty body is no change, as the README's PATCH says: 200 with the account as it is.
  const same = await raw("PATCH", `/admin/accounts/${id}`, "");
  assert.deepEqual([same.status, same.body.plan], [200, "starter"]);
});

Deno.test("admin API: GET /admin/accounts/{id} reads the usage against the account's own plan, as the key holder's /v1/usage does", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const plans = builtinPlans();
  for (const plan of ["starter", "growth", "scale", "free"]) {
    const { id, key } = await s.account(plan);
    const shown = await admin(s, "GET", `/admin/accounts/${id}`);
    assert.equal(shown.status, 200, plan);
    assert.equal(shown.body.plan, plan);
    // The operator answering "how much has this customer left?" must see the customer's figures.
    assert.equal(shown.body.usage.plan, plan);
    assert.equal(shown.body.usage.included_requests, plans.get(plan)!.credits, plan);
    assert.equal(shown.body.usage.requests_remaining, plans.get(plan)!.credits, plan);
    assert.equal(
      shown.body.usage.rate_limit_per_sec,
      plans.get(plan)!.rate_limit_per_sec,
      plan,
    );
    const own = await s.get("/v1/usage", key);
    assert.equal(own.status, 200, plan);
    assert.deepEqual(shown.body.usage, await own.json(), plan);
  }
});
