/**
 * Ops and error lines that quote what a client sent are masked as access lines are (probe CR):
 * an upstream URL is built from a client's query, so a key or the admin token searched for by
 * mistake was logged in clear by every retry line, while the access line masked it.
 */
import assert from "node:assert/strict";
import { maskSecrets, opsLog, setLoggedSecrets, setOpsLogSink } from "../core/ops_log.ts";
import { startRig } from "./upstream_harness.ts";

const TOKEN = "0123456789abcdef".repeat(4); // as `openssl rand -hex 32` makes one

Deno.test("retry lines of a search for a key or the admin token show neither", async () => {
  const lines: Record<string, unknown>[] = [];
  setOpsLogSink((l) => void lines.push(l));
  setLoggedSecrets([TOKEN]);
  try {
    await using rig = await startRig({ browser: { log: opsLog } });
    for (const query of [rig.key, TOKEN]) {
      rig.fake.fail("503", 10, "/s");
      const r = await rig.call(`/v1/products/search?query=${query}`);
      assert.equal(r.status, 503, JSON.stringify(r.body));
      rig.fake.recover();
    }
    const retries = lines.filter((l) => l.event === "upstream_retry");
    assert.ok(retries.length >= 2, JSON.stringify(lines));
    const text = JSON.stringify(lines);
    for (const secret of [rig.key.slice(11), TOKEN.slice(0, 16), TOKEN.slice(48)]) {
      assert.ok(!text.includes(secret), `${secret} in ${text}`);
    }
    assert.match(String(retries[0].url), /\/s\?k=\*\*\*/);
  } finally {
    setOpsLogSink(null);
    setLoggedSecrets([]);
  }
});

Deno.test("masking: an admin token of any alphabet, its pieces, secret parameter names, text after #, escapes two deep", () => {
  const lines: Record<string, unknown>[] = [];
  setOpsLogSink((l) => void lines.push(l));
  // Not hex, so that no rule for a key's digits masks it by chance.
  const token = "Zq7-Lm2_Vx9pRt4sKw8yBn3cHd6fJg5h";
  setLoggedSecrets([token]);
  try {
    opsLog({ event: "upstream_retry", url: `https://www.amazon.com/s?k=${token}` });
    opsLog({ event: "upstream_retry", url: `https://www.amazon.com/s?k=x${token}y` });
    assert.ok(!JSON.stringify(lines).includes(token.slice(4, 20)), JSON.stringify(lines));
  } finally {
    setOpsLogSink(null);
    setLoggedSecrets([]);
  }
  const shown = (path: string, secrets: string[] = []) => maskSecrets(path, secrets);
  // A piece of the token from 16 characters on (probe DG: one pasted a character short).
  for (const n of [16, 20, 31]) {
    const out = shown(`/admin/x?y=${token.slice(0, n)}`, [token]);
    assert.ok(!out.includes(token.slice(0, 16)), `${n}: ${out}`);
  }
  // Every parameter name a client may put a secret under, whatever the value looks like.
  for (
    const name of [
      "api_key",
      "apikey",
      "key",
      "token",
      "access_token",
      "admin_token",
      "auth",
      "authorization",
      "bearer",
      "password",
      "secret",
    ]
  ) {
    assert.equal(shown(`/v1/usage?a=1&${name}=hunter2x`), `/v1/usage?a=1&${name}=***`, name);
    // After a "#", which ends the query for the parser but is logged all the same.
    assert.ok(!shown(`/v1/usage?a=1#${name}=hunter2x`).includes("hunter2x"), `#${name}`);
  }
  // Escaped twice, one of the key's digits and one of the token's characters.
  const key = `shelf_test_%2533${"fa93".repeat(11)}fa9`;
  assert.ok(!shown(`/v1/usage?z=${key}`).includes("fa93fa93fa93"), shown(`/v1/usage?z=${key}`));
  const tokenTwice = `%25${token.charCodeAt(0).toString(16)}${token.slice(1)}`;
  assert.ok(!shown(`/v1/usage?z=${tokenTwice}`, [token]).includes(token.slice(1, 20)));
});
