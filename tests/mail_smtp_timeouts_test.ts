/**
 * A mail server cannot wedge the alert sender (issue 13.8): one that accepts and never greets,
 * one that greets and then never answers, and one that streams an endless reply line each make
 * sendMail fail within its deadline; an alert raised meanwhile stays in the outbox with its error
 * and is delivered once a working server (the real smtp-server of smtp_sink.ts) is configured.
 */
import assert from "node:assert/strict";
import { NOT_MAILABLE, parseSmtpUrl, sendMail, SmtpError } from "../mail/smtp.ts";
import { eventually, startSmtpSink } from "./smtp_sink.ts";
import { startServer } from "./test_server.ts";
import { withTinyPlan } from "./tiny_plan.ts";
import { listAlerts } from "../metering/alerts.ts";
import { removeKvFiles } from "../core/kv_files.ts";

type Behaviour = "silent" | "greet-then-silent" | "endless-line" | "drip" | "greet-then-drip";

/** A loopback TCP server that misbehaves; every connection is kept until close(). */
function badServer(behaviour: Behaviour) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  let stopped = false;
  const served = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      (async () => {
        const enc = new TextEncoder();
        if (behaviour === "greet-then-silent") {
          await conn.write(enc.encode("220 bad.example ESMTP\r\n")).catch(() => {});
        }
        if (behaviour === "drip") {
          // A reply line that never ends, one byte at a time: every read returns, none completes.
          await conn.write(enc.encode("220-")).catch(() => {});
          while (!stopped) {
            await new Promise((r) => setTimeout(r, 50));
            if (await conn.write(enc.encode("x")).then(() => false, () => true)) break;
          }
        }
        if (behaviour === "greet-then-drip") {
          // A proper greeting, then an EHLO answer that never ends, one byte every 50 ms: each byte
          // restarts nodemailer's socket timeout, so only sendMail's overall deadline ends it (M04).
          await conn.write(enc.encode("220 bad.example ESMTP\r\n")).catch(() => {});
          await conn.read(new Uint8Array(4096)).catch(() => null);
          await conn.write(enc.encode("250-")).catch(() => {});
          while (!stopped) {
            await new Promise((r) => setTimeout(r, 50));
            if (await conn.write(enc.encode("x")).then(() => false, () => true)) break;
          }
        }
        if (behaviour === "endless-line") {
          const chunk = enc.encode("220-" + "x".repeat(16 * 1024));
          while (!stopped) {
            try {
              await conn.write(chunk);
            } catch {
              break;
            }
          }
        }
        // Read and ignore whatever the client says.
        const buf = new Uint8Array(4096);
        while (!stopped && (await conn.read(buf).catch(() => null)) !== null) { /* never answer */ }
      })();
    }
  })();
  return {
    url: `smtp://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    async close() {
      stopped = true;
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await served.catch(() => {});
    },
  };
}

for (const behaviour of ["silent", "greet-then-silent", "endless-line", "drip"] as const) {
  Deno.test(`sendMail gives up within its deadline on a server that is ${behaviour}`, async () => {
    const server = badServer(behaviour);
    try {
      const cfg = parseSmtpUrl(server.url, "Shelf <a@shelf.test>", 700);
      const started = performance.now();
      await assert.rejects(
        sendMail(cfg, { to: "dev@example.com", subject: "s", text: "t" }),
        SmtpError,
      );
      const ms = performance.now() - started;
      assert.ok(ms < 3_000, `gave up after ${Math.round(ms)} ms`);
      const rss = Deno.memoryUsage().rss;
      assert.ok(rss < 1_000_000_000, "an endless reply is not buffered without end");
    } finally {
      await server.close();
    }
  });
}

Deno.test("sendMail gives up within its deadline on a server that greets, then answers EHLO one byte every 50 ms (probe GT M04)", async () => {
  const server = badServer("greet-then-drip");
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const cfg = parseSmtpUrl(server.url, "Shelf <a@shelf.test>", 700);
    const resolver = {
      mx: () => Promise.resolve(["mx.example.com"]),
      addresses: () => Promise.resolve(["93.184.216.34"]),
    };
    const sent = sendMail(cfg, { to: "dev@example.com", subject: "s", text: "t" }, resolver).then(
      () => "sent",
      (e) => e,
    );
    const bound = new Promise<string>((r) =>
      timer = setTimeout(() => r("still pending after 4 s"), 4_000)
    );
    const outcome = await Promise.race([sent, bound]);
    assert.ok(outcome instanceof SmtpError, `sendMail: ${outcome}`);
    assert.match(outcome.message, /no answer from the mail server within 700 ms/);
    await sent;
  } finally {
    clearTimeout(timer);
    await server.close();
  }
});

Deno.test("an alert raised while the mail server stalls stays in the outbox with its error, and is delivered later", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const plans = withTinyPlan(100);
  const stalled = badServer("greet-then-silent");
  let accountId = "";
  try {
    await using s = await startServer({
      kvPath,
      plans,
      smtp: {
        url: stalled.url,
        timing: { pollMs: 50, retryMs: 50, maxDelayMs: 200 },
        timeoutMs: 300,
      },
    });
    const { id, key } = await s.account("tiny");
    accountId = id;
    for (let i = 0; i < 2; i++) {
      await (await s.get("/v1/products/offers?asin=B07H57DNVV", key)).body?.cancel();
    }
    await eventually(
      "a failed attempt recorded",
      async () => (await listAlerts(s.kv, id)).some((a) => a.attempts > 0 && a.last_error),
    );
    const alerts = await listAlerts(s.kv, id);
    assert.ok(alerts.every((a) => a.status !== "delivered"));
    assert.match(alerts.find((a) => a.last_error)!.last_error!, /within 300 ms|timeout|timed out/i);
  } finally {
    await stalled.close();
  }
  await using sink = await startSmtpSink();
  await using later = await startServer({
    kvPath,
    plans,
    smtp: { url: sink.url, timing: { pollMs: 50, retryMs: 50, maxDelayMs: 200 } },
  });
  // The sink has a message before the sender has its reply and records the delivery: wait for both.
  await eventually(
    "the alerts delivered by a working server",
    async () =>
      sink.received.length >= 2 &&
      (await listAlerts(later.kv, accountId)).every((a) => a.status === "delivered"),
    15_000,
  );
  assert.equal(sink.received.length, 2, "each alert is sent once");
  await removeKvFiles(kvPath);
});

Deno.test("sendMail hands no mail for a host off the public internet to the mail server (probe EV)", async () => {
  await using smtp = await startSmtpSink();
  const cfg = parseSmtpUrl(smtp.url, "Shelf <alerts@example.com>");
  for (const to of ["root@localhost", "b@0xa9fea9fe", "ops@mail.internal"]) {
    await assert.rejects(
      sendMail(cfg, { to, subject: "s", text: "t" }),
      (e: Error) => e instanceof SmtpError && e.message === NOT_MAILABLE,
      to,
    );
  }
  await sendMail(cfg, { to: "dev@example.com", subject: "s", text: "t" });
  await eventually("the public address's mail", () => smtp.received.length === 1);
  assert.deepEqual(smtp.received[0].to, ["dev@example.com"]);
});

Deno.test("sendMail hands no mail to the mail server for a domain whose mail hosts resolve off the public internet (probe GC)", async () => {
  await using smtp = await startSmtpSink();
  const cfg = parseSmtpUrl(smtp.url, "Shelf <alerts@example.com>");
  // The names resolve here as an outside DNS server would answer them (none answers here).
  const records: Record<string, { mx?: string[]; a?: string[] }> = {
    "10.0.0.5.nip.io": { a: ["10.0.0.5"] },
    "corp.example": { mx: ["mx1.corp.example.", "mx2.corp.example."] },
    "mx1.corp.example": { a: ["93.184.215.14"] },
    "mx2.corp.example": { a: ["2001:db8::25", "93.184.215.15"] },
    "literal.example": { mx: ["169.254.169.254"] },
    "shop.example": { mx: ["mx.shop.example."] },
    "mx.shop.example": { a: ["93.184.215.16"], mx: [] },
    "nomx.example": { a: ["93.184.215.17"] },
    "nullmx.example": { mx: ["."], a: ["93.184.215.18"] },
    // Eight public hosts, then a private one (probe GI: only the first eight were looked at).
    "ninth.example": {
      mx: [...Array.from({ length: 8 }, (_, i) => `mx${i}.shop.example`), "mx.corp.example"],
    },
    "mx.corp.example": { a: ["10.0.0.5"] },
    "many.example": { mx: Array.from({ length: 17 }, () => "mx.shop.example") },
  };
  const resolver = {
    mx: (d: string) => Promise.resolve(records[d]?.mx ?? []),
    addresses: (h: string) =>
      Promise.resolve(records[h]?.a ?? (h.endsWith(".shop.example") ? ["93.184.215.16"] : [])),
  };
  const mail = (to: string) => sendMail(cfg, { to, subject: "s", text: "t" }, resolver);
  const refused = ["x@10.0.0.5.nip.io", "x@corp.example", "x@literal.example", "x@ninth.example"];
  for (const to of [...refused, "x@many.example"]) {
    await assert.rejects(
      mail(to),
      (e: Error) => e instanceof SmtpError && e.message === NOT_MAILABLE,
      to,
    );
  }
  // Public mail hosts, and names no DNS server answers for, are mailed.
  const sent = ["a@shop.example", "b@nomx.example", "c@nullmx.example", "d@unknown.example"];
  for (const to of sent) await mail(to);
  await eventually("the public domains' mail", () => smtp.received.length === sent.length);
  assert.deepEqual(smtp.received.map((m) => m.to[0]).sort(), sent.sort());
});

Deno.test("a domain whose mail hosts never answer holds a mail for the lookups' one bound, then it is sent (probe GI)", async () => {
  await using smtp = await startSmtpSink();
  const cfg = parseSmtpUrl(smtp.url, "Shelf <alerts@example.com>");
  const never = (_: string, signal: AbortSignal) =>
    new Promise<string[]>((_, reject) =>
      signal.addEventListener("abort", () => reject(signal.reason))
    );
  const resolver = {
    mx: () => Promise.resolve(Array.from({ length: 8 }, (_, i) => `mx${i}.slow.example`)),
    addresses: never,
  };
  const started = Date.now();
  await sendMail(cfg, { to: "x@slow.example", subject: "s", text: "t" }, resolver);
  // Looked up one after another, each host had its own two seconds: 16 s a mail.
  assert.ok(Date.now() - started < 4_000, `${Date.now() - started} ms`);
  await eventually("the mail", () => smtp.received.length === 1);
});
