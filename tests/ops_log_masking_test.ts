/**
 * Ops and error lines that quote what a client sent are masked as access lines are (probe CR):
 * an upstream URL is built from a client's query, so a key or the admin token searched for by
 * mistake was logged in clear by every retry line, while the access line masked it.
 */
import assert from "node:assert/strict";
import { maskSecrets, opsLog, setLoggedSecrets, setOpsLogSink } from "../core/ops_log.ts";
import { startRig } from "./upstream_harness.ts";
import { createApp } from "../app.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { spawnShelf } from "./proof/shelf_process.ts";
import { createAccount } from "./proof/admin_client.ts";

const TOKEN = "0123456789abcdef".repeat(4); // as `openssl rand -hex 32` makes one
// Not hex, so that no rule for a key's digits masks it by chance: only the admin token's own.
const WORD_TOKEN = "Zq7-Lm2_Vx9pRt4sKw8yBn3cHd6fJg5h";

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

/** Runs `code` (a module) in a child Deno and returns what it wrote to stderr. */
async function stderrOf(code: string): Promise<string> {
  const file = await Deno.makeTempFile({
    dir: new URL(".", import.meta.url).pathname,
    suffix: "_child.ts",
  });
  try {
    await Deno.writeTextFile(file, code);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", file],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stderr);
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("stderr error lines mask keys and the admin token in message and detail, and give an Error's message, never its stack", async () => {
  const key = `shelf_live_${"7c41".repeat(12)}`;
  const log = new URL("../core/log.ts", import.meta.url).href;
  const opsLogUrl = new URL("../core/ops_log.ts", import.meta.url).href;
  const stderr = await stderrOf(`
    import { consoleLog, flushErrorLog } from ${JSON.stringify(log)};
    import { setLoggedSecrets } from ${JSON.stringify(opsLogUrl)};
    setLoggedSecrets([${JSON.stringify(TOKEN)}]);
    consoleLog.error(${JSON.stringify(`admin call ${TOKEN} refused`)}, "plain detail");
    consoleLog.error("unhandled error", ${JSON.stringify(`GET /v1/usage?z=${key}`)});
    consoleLog.error("unhandled error", new Error(${JSON.stringify(`fetch /s?k=${TOKEN} failed`)}));
    await flushErrorLog();
  `);
  const lines = stderr.split("\n").filter((l) => l.trim());
  assert.equal(lines.length, 3, stderr);
  for (const secret of [TOKEN.slice(0, 16), TOKEN.slice(48), key.slice(11, 27)]) {
    assert.ok(!stderr.includes(secret), `${secret} in ${stderr}`);
  }
  assert.match(lines[0], /^\[shelf\] .*plain detail$/);
  assert.match(lines[2], /^\[shelf\] unhandled error fetch \/s\?k=/);
  assert.doesNotMatch(stderr, /^\s+at /m, "no stack lines");
});

Deno.test("the admin token in a path or an X-Request-Id never reaches the access log or the answer; an unexpected error is a 503, never a 500", async () => {
  const kv = await Deno.openKv(":memory:");
  const access: Record<string, unknown>[] = [];
  const errors: unknown[] = [];
  try {
    const { app, deps } = createApp({
      kv,
      plans: builtinPlans(),
      clock: systemClock,
      dataSource: { fetch: () => Promise.resolve({}) },
      adminToken: WORD_TOKEN,
      accessLog: (l) => void access.push(l),
      log: { error: (m, d) => void errors.push([m, String(d)]) },
    });
    const r = await app.request(`http://127.0.0.1/v1/anything?x=${WORD_TOKEN}`, {
      headers: { "x-request-id": WORD_TOKEN },
    });
    await r.body?.cancel();
    assert.equal(r.status, 404);
    assert.notEqual(
      r.headers.get("x-request-id"),
      WORD_TOKEN,
      "the id holding the token is replaced",
    );
    assert.ok(access.length >= 1, "an access line");
    assert.ok(!JSON.stringify(access).includes(WORD_TOKEN.slice(4, 20)), JSON.stringify(access));

    // A failure no route expects (a bug: here the store throwing a TypeError).
    const a = await deps.accounts.create("unexpected@example.com", "free");
    const { value: key } = await deps.accounts.createKey(a.id, { name: "t" });
    for (const m of ["get", "getMany", "atomic", "list"] as const) {
      (kv as unknown as Record<string, unknown>)[m] = () => {
        throw new TypeError("a bug");
      };
    }
    const u = await app.request("http://127.0.0.1/v1/usage", { headers: { "x-api-key": key } });
    assert.equal(u.status, 503);
    assert.equal((await u.json()).error.code, "unavailable");
    assert.deepEqual(errors, [["unhandled error", "TypeError: a bug"]]);
  } finally {
    kv.close();
  }
});

Deno.test("a running Shelf masks its admin token in event lines: a search for it while the marketplace fails", async () => {
  await using fake = new FakeMarketplace();
  const dir = await Deno.makeTempDir();
  try {
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: fake.upstream,
      ADMIN_TOKEN: WORD_TOKEN,
    });
    const { key } = await createAccount(shelf.url, WORD_TOKEN, "growth");
    // One failure: its retry line names the URL, built from the query.
    fake.fail("503", 1, "/s");
    const r = await fetch(`${shelf.url}/v1/products/search?query=${WORD_TOKEN}`, {
      headers: { "x-api-key": key },
    });
    await r.body?.cancel();
    const until = Date.now() + 10_000;
    while (!/"event":"upstream_/.test(shelf.logs()) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const events = shelf.logs().split("\n").filter((l) => /"event":"upstream_/.test(l));
    assert.ok(events.length >= 1, shelf.logs());
    for (const secret of [WORD_TOKEN.slice(4, 20), WORD_TOKEN.slice(16)]) {
      assert.ok(!shelf.logs().includes(secret), `${secret} in ${shelf.logs()}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
