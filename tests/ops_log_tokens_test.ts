/**
 * The access log never holds a mailed token (INTERFACE.md: never a key, a password, a session
 * token or a cookie in a log line): the sign-up confirmation and password-reset links carry their
 * token in the query, and the logged path has it masked. Real server on loopback, real SMTP.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { startSmtpSink } from "./smtp_sink.ts";
import { MAX_DETAIL, throttledError } from "../core/log.ts";

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

/** The lines `code` (run by `deno eval`, exit code 0) wrote to stderr. */
async function stderrLines(code: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  return stderr.split("\n").filter((l) => l);
}

Deno.test("consoleLog: an error's detail is cut to MAX_DETAIL characters on stderr, and said so", async () => {
  const log = new URL("../core/log.ts", import.meta.url).href;
  const code = `
    import { consoleLog, flushErrorLog } from ${JSON.stringify(log)};
    consoleLog.error("long detail", "x".repeat(3 * ${MAX_DETAIL}) + "TAIL");
    await flushErrorLog();
  `;
  const lines = await stderrLines(code);
  assert.equal(lines.length, 1, lines.join("\n").slice(0, 200));
  assert.equal(lines[0], `[shelf] long detail ${"x".repeat(MAX_DETAIL)}… (cut)`);
});

Deno.test("throttledError: the count of lines left out starts again after each line written", () => {
  const logged: string[] = [];
  const realNow = Date.now;
  let now = 1_000_000;
  Date.now = () => now;
  try {
    const report = throttledError({ error: (m) => void logged.push(m) }, "mail refused", 60_000);
    report(); // written at once
    for (let i = 0; i < 3; i++) report(); // left out
    now += 60_000;
    report(); // written, saying 3 more
    report(); // left out
    now += 60_000;
    report(); // written, saying 1 more: not 4
    now += 60_000;
    report(); // written, none left out since
  } finally {
    Date.now = realNow;
  }
  assert.deepEqual(logged, [
    "mail refused",
    "mail refused (and 3 more since the last such line)",
    "mail refused (and 1 more since the last such line)",
    "mail refused",
  ]);
});

Deno.test("consoleLog: any thrown value is written as one line, its controls escaped and a URL's password masked (probe HI)", async () => {
  const log = new URL("../core/log.ts", import.meta.url).href;
  const code = `
    import { consoleLog, flushErrorLog } from ${JSON.stringify(log)};
    consoleLog.error("a symbol", Symbol("sym"));
    consoleLog.error("a function", () => 1);
    consoleLog.error("no toString", { toString() { throw new Error("no"); }, toJSON() { throw new Error("no"); } });
    consoleLog.error("forged", "x\\n[shelf] forged\\r\\x1b[2J\\u2028y");
    consoleLog.error("fetch failed", new Error("error sending request for url (http://user:hunter2secret@proxy.example:8080/)"));
    consoleLog.error("proxies", "socks5://a:pw1@p1.example:1080 then socks5h://b:pw2@p2.example:1080");
    consoleLog.error("nul and del", "a\\x00b\\x7fc");
    await flushErrorLog();
  `;
  assert.deepEqual(await stderrLines(code), [
    "[shelf] a symbol Symbol(sym)",
    "[shelf] a function ()=>1", // the function's source, as deno eval compiled it
    "[shelf] no toString (a value that cannot be shown)",
    "[shelf] forged x\\x0a[shelf] forged\\x0d\\x1b[2J\\u2028y",
    "[shelf] fetch failed error sending request for url (http://***@proxy.example:8080/)",
    "[shelf] proxies socks5://***@p1.example:1080 then socks5h://***@p2.example:1080",
    "[shelf] nul and del a\\x00b\\x7fc",
  ]);
});
