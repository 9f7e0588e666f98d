/**
 * The access log never holds a mailed token (INTERFACE.md: never a key, a password, a session
 * token or a cookie in a log line): the sign-up confirmation and password-reset links carry their
 * token in the query, and the logged path has it masked. Real server on loopback, real SMTP.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { startSmtpSink } from "./smtp_sink.ts";

Deno.test("mailed tokens in /dashboard/verify and /dashboard/reset links are masked in the access log", async () => {
  await using smtp = await startSmtpSink();
  const lines: Record<string, unknown>[] = [];
  await using s = await startServer({
    signup: "verify",
    smtp: { url: smtp.url },
    accessLog: (l) => void lines.push(l),
  });
  const token = "ab".repeat(32);
  for (const path of ["/dashboard/verify", "/dashboard/reset"]) {
    const r = await fetch(`${s.url}${path}?token=${token}&x=1`, { redirect: "manual" });
    await r.body?.cancel();
  }
  const logged = lines.map((l) => String(l.path));
  assert.deepEqual(logged, [
    "/dashboard/verify?token=***&x=1",
    "/dashboard/reset?token=***&x=1",
  ]);
  assert.ok(!JSON.stringify(lines).includes(token), "the token appears nowhere in the log");
});
