/**
 * The one lookup both SSRF guards judge a name by (core/resolve_host.ts): every other test hands
 * them a stand-in resolver, so the real one is tried here on the one name every resolver answers
 * without a DNS server (RFC 6761: localhost is loopback in both families).
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import type { Buffer } from "node:buffer";
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

/** A DNS server on loopback UDP that answers A queries with 93.184.215.14 after `delayMs`. */
async function slowDns(delayMs: number) {
  const socket = dgram.createSocket("udp4");
  socket.on("message", (msg: Buffer, from: { address: string; port: number }) => {
    setTimeout(() => {
      let end = 12;
      while (msg[end] !== 0) end += msg[end] + 1;
      end += 5; // the name's last 0, its type and class
      const isA = msg[end - 4] === 0 && msg[end - 3] === 1;
      const header = [msg[0], msg[1], 0x81, 0x80, 0, 1, 0, isA ? 1 : 0, 0, 0, 0, 0];
      const answer = isA ? [0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 93, 184, 215, 14] : [];
      socket.send(
        new Uint8Array([...header, ...msg.subarray(12, end), ...answer]),
        from.port,
        from.address,
      );
    }, delayMs);
  });
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", r));
  return {
    nameServer: { ipAddr: "127.0.0.1", port: socket.address().port },
    [Symbol.dispose]: () => socket.close(),
  };
}

Deno.test("resolveHost waits out its whole bound for a slow answer (probe GU: the runtime, given the signal, dropped answers after 1 s)", async () => {
  using dns = await slowDns(1_300);
  const found = await resolveHost("slow.example", AbortSignal.timeout(3_000), dns.nameServer);
  assert.deepEqual(found, ["93.184.215.14"]);
  // Past the bound, nothing: the caller decides what a name that did not resolve means.
  const began = performance.now();
  assert.deepEqual(await resolveHost("slow.example", AbortSignal.timeout(300), dns.nameServer), []);
  assert.ok(performance.now() - began < 1_200, "given up at the bound, not at the answer");
  await new Promise((r) => setTimeout(r, 1_200)); // the unread lookup ends before the test does
});

Deno.test("resolveHost with a signal already aborted gives nothing, not the answer that comes later (probe HM)", async () => {
  using dns = await slowDns(300);
  assert.deepEqual(await resolveHost("slow.example", AbortSignal.abort(), dns.nameServer), []);
  await new Promise((r) => setTimeout(r, 500)); // the unread lookup ends before the test does
});
