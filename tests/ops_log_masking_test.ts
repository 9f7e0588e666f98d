/**
 * Ops and error lines that quote what a client sent are masked as access lines are (probe CR):
 * an upstream URL is built from a client's query, so a key or the admin token searched for by
 * mistake was logged in clear by every retry line, while the access line masked it.
 */
import assert from "node:assert/strict";
import { opsLog, setLoggedSecrets, setOpsLogSink } from "../core/ops_log.ts";
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
