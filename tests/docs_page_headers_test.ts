/**
 * The headers of the keyless meta routes, through a real server: the /docs page's CSP (never
 * framed, talking to Shelf only), its revalidation against the immutable swagger-ui assets, the
 * init script that must not keep a pasted API key, and /openapi.json and the /v1/ index.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";

/** The CSP's directives by name: `frame-ancestors` → ["'none'"]. */
function directives(csp: string): Record<string, string[]> {
  return Object.fromEntries(
    csp.split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0])
      .map(([name, ...values]) => [name, values]),
  );
}

Deno.test("/docs and /docs/ may not be framed, and their scripts may connect to Shelf only", async () => {
  await using s = await startServer();
  for (const path of ["/docs", "/docs/"]) {
    const r = await s.get(path);
    await r.body?.cancel();
    assert.equal(r.status, 200, path);
    const csp = directives(r.headers.get("content-security-policy") ?? "");
    assert.deepEqual(csp["frame-ancestors"], ["'none'"], path);
    assert.deepEqual(csp["connect-src"], ["'self'"], path);
    assert.deepEqual(csp["default-src"], ["'none'"], path);
  }
});

Deno.test("the /docs page and its init script are revalidated (no-cache); only the swagger-ui assets are cached for a day", async () => {
  await using s = await startServer();
  for (const path of ["/docs", "/docs/", "/docs/init.js"]) {
    const r = await s.get(path);
    await r.body?.cancel();
    assert.equal(r.status, 200, path);
    assert.equal(r.headers.get("cache-control"), "no-cache", path);
  }
  for (const path of ["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"]) {
    const r = await s.get(path);
    await r.body?.cancel();
    assert.equal(r.headers.get("cache-control"), "public, max-age=86400", path);
  }
});

Deno.test("/docs/init.js does not keep a pasted API key in the browser (persistAuthorization off)", async () => {
  await using s = await startServer();
  const init = await (await s.get("/docs/init.js")).text();
  assert.match(init, /SwaggerUIBundle\(/);
  // swagger-ui's own default is off; the script may say so, never turn it on.
  assert.doesNotMatch(init, /persistAuthorization\s*:\s*(true|!0|1)/);
  const setting = init.match(/persistAuthorization\s*:\s*([^,\s}]+)/);
  if (setting) assert.equal(setting[1], "false");
});

Deno.test("/openapi.json is served as application/json", async () => {
  await using s = await startServer();
  const r = await s.get("/openapi.json");
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json(;|$)/);
  assert.equal((await r.json()).openapi, "3.1.0");
});

Deno.test("the /v1/ index gives every data endpoint its summary", async () => {
  await using s = await startServer();
  const body = await (await s.get("/v1/")).json();
  const byPath = Object.fromEntries(
    body.endpoints.map((e: { path: string; summary?: string }) => [e.path, e]),
  );
  for (const ep of ALL_ENDPOINTS) {
    assert.equal(typeof ep.summary, "string", ep.path);
    assert.ok(ep.summary.length > 0, ep.path);
    assert.equal(byPath[ep.path]?.summary, ep.summary, ep.path);
  }
});
