/**
 * Edges of the log's masking (core/ops_log.ts) the other tests do not reach: an admin token of the
 * shortest length start-up accepts, and a secret parameter's name written in capitals. Each is a
 * secret in a line that goes to every log collector.
 */
import assert from "node:assert/strict";
import { opsLog, setLoggedSecrets, setOpsLogSink } from "../core/ops_log.ts";
import { startRig } from "./upstream_harness.ts";
import { startServer } from "./test_server.ts";

/** 24 characters, the least ADMIN_TOKEN may have; not hex, so no rule for a key's digits masks it. */
const SHORT_TOKEN = "Zq7-Lm2_Vx9pRt4sKw8yBn3c";

/** The event lines `f` logs, with the sink and the logged secrets restored after. */
async function eventLines(f: () => Promise<void> | void): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  setOpsLogSink((l) => void lines.push(l));
  try {
    await f();
  } finally {
    setOpsLogSink(null);
    setLoggedSecrets([]);
  }
  return lines;
}

Deno.test("retry lines of a search for an admin token of the shortest accepted length (24) do not show it", async () => {
  const lines = await eventLines(async () => {
    setLoggedSecrets([SHORT_TOKEN]);
    await using rig = await startRig({ browser: { log: opsLog } });
    rig.fake.fail("503", 10, "/s");
    const r = await rig.call(`/v1/products/search?query=${SHORT_TOKEN}`);
    assert.equal(r.status, 503, JSON.stringify(r.body));
  });
  const retries = lines.filter((l) => l.event === "upstream_retry");
  assert.ok(retries.length >= 1, JSON.stringify(lines));
  const text = JSON.stringify(lines);
  assert.ok(!text.includes(SHORT_TOKEN.slice(0, 16)), text);
  assert.match(String(retries[0].url), /\/s\?k=\*\*\*/);
});

Deno.test("the access log masks a secret parameter whose name is written in capitals (Password=, API_KEY=)", async () => {
  // The query parser reads names as they come, but a client that writes API_KEY= meant a key.
  const access: Record<string, unknown>[] = [];
  await using s = await startServer({ accessLog: (l) => void access.push(l) });
  for (
    const query of ["query=x&Password=hunter2", "API_KEY=wrong-key-value", "Access_Token=abc123xyz"]
  ) {
    const r = await fetch(`${s.url}/v1/products/search?${query}`);
    await r.body?.cancel();
  }
  assert.deepEqual(access.map((l) => l.path), [
    "/v1/products/search?query=x&Password=***",
    "/v1/products/search?API_KEY=***",
    "/v1/products/search?Access_Token=***",
  ]);
  const text = JSON.stringify(access);
  for (const secret of ["hunter2", "wrong-key-value", "abc123xyz"]) {
    assert.ok(!text.includes(secret), `${secret} in ${text}`);
  }
});
