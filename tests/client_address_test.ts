/**
 * Who a request counts as (routes/client_address.ts): an IPv4-mapped IPv6 peer, as a dual-stack
 * listener (HOST=::) sees every IPv4 client, counts as its IPv4 address, not as one shared
 * `0:0:0:0::/64` block for all IPv4 clients.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { clientAddress } from "../routes/client_address.ts";
import type { Client } from "../metering/window_slots.ts";

async function keyOf(forwarded: string): Promise<Client> {
  let got: Client | undefined;
  const app = new Hono();
  app.get("/", (c) => {
    got = clientAddress(c, 1);
    return c.text("ok");
  });
  const r = await app.request("/", { headers: { "x-forwarded-for": forwarded } });
  await r.body?.cancel();
  assert.ok(got);
  return got;
}

Deno.test("an IPv4-mapped IPv6 address counts as its IPv4 address; other IPv6 addresses by /64 and /48", async () => {
  assert.deepEqual(await keyOf("::ffff:198.51.100.7"), { address: "198.51.100.7", network: null });
  assert.deepEqual(await keyOf("[::ffff:203.0.113.9]:443"), {
    address: "203.0.113.9",
    network: null,
  });
  assert.deepEqual(await keyOf("::ffff:c633:6407"), { address: "198.51.100.7", network: null });
  // The same client over IPv4 gets the same key; two IPv4 clients never share one.
  assert.deepEqual(await keyOf("::ffff:198.51.100.7"), await keyOf("198.51.100.7"));
  assert.notDeepEqual(await keyOf("::ffff:198.51.100.7"), await keyOf("::ffff:198.51.100.8"));
  assert.deepEqual(await keyOf("2001:db8:7:1::1"), {
    address: "2001:db8:7:1::/64",
    network: "2001:db8:7::/48",
  });
});
