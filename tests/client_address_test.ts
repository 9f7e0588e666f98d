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

// X-Forwarded-For as proxies really write it: nginx's `$proxy_add_x_forwarded_for` joins the
// client's own header and the address it was reached from with ", ", and RFC 7239-style writers
// bracket an IPv6 address with or without a port. A client that sends its own X-Forwarded-For
// does not thereby count as the proxy (one bucket shared by every client behind it).
Deno.test("X-Forwarded-For joined with ', ' (nginx): the entry the proxy added names the client", async () => {
  assert.deepEqual(await keyOf("198.51.100.7, 203.0.113.9"), {
    address: "203.0.113.9",
    network: null,
  });
  // The client's own (forged) entry is not who it counts as, however the entries are spaced.
  assert.deepEqual(await keyOf("198.51.100.7,  203.0.113.9 "), {
    address: "203.0.113.9",
    network: null,
  });
  assert.deepEqual(await keyOf("unknown, 2001:db8:7:1::1"), {
    address: "2001:db8:7:1::/64",
    network: "2001:db8:7::/48",
  });
  assert.deepEqual(await keyOf("198.51.100.7, 203.0.113.9:51234"), {
    address: "203.0.113.9",
    network: null,
  });
});

Deno.test("X-Forwarded-For: a bracketed IPv6 address counts by its /64 with or without a port", async () => {
  const expected = { address: "2001:db8:7:1::/64", network: "2001:db8:7::/48" };
  assert.deepEqual(await keyOf("[2001:db8:7:1::1]"), expected);
  assert.deepEqual(await keyOf("[2001:db8:7:1::1]:443"), expected);
  assert.deepEqual(await keyOf("198.51.100.7, [2001:db8:7:1::1]"), expected);
});
