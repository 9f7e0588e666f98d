/**
 * The one lookup both SSRF guards judge a name by (core/resolve_host.ts): every other test hands
 * them a stand-in resolver, so the real one is tried here on the one name every resolver answers
 * without a DNS server (RFC 6761: localhost is loopback in both families).
 */
import assert from "node:assert/strict";
import { resolveHost } from "../core/resolve_host.ts";
import { privateMailHost } from "../mail/mail_host.ts";

Deno.test("resolveHost gives a name's addresses of both families (probe GP: an AAAA-only private host passed the mail check)", async () => {
  const found = await resolveHost("localhost");
  assert.ok(found.includes("127.0.0.1"), JSON.stringify(found));
  assert.ok(found.includes("::1"), JSON.stringify(found));
  const aborted = new AbortController();
  aborted.abort();
  assert.deepEqual(await resolveHost("localhost.example", aborted.signal), []);
});

Deno.test("the mail host check through the system's resolver refuses a domain that leads to loopback", async () => {
  assert.match(
    (await privateMailHost("localhost")) ?? "passed",
    /^localhost \((127\.0\.0\.1|::1)\)$/,
  );
});
