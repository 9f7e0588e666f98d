/**
 * What counts as a public address (core/ip_address.ts), which the webhook, proxy and mail host
 * rules rest on: each special range at its edges, and an IPv4 address carried inside IPv6 in every
 * form the rules read, as a DNS answer gives it (probe HM: range ends, a dotted tail's halves and
 * 6to4's groups could change with no test failing).
 */
import assert from "node:assert/strict";
import { isPublicAddress } from "../core/ip_address.ts";

const NOT_PUBLIC = [
  // IPv4: reserved 240/4 and broadcast, multicast 224/4 at both ends, benchmarking 198.18/15,
  // the top of 192.168/16 and of link-local 169.254/16.
  "240.0.0.1",
  "250.1.2.3",
  "255.255.255.255",
  "224.0.0.1",
  "225.1.2.3",
  "239.255.255.250",
  "198.18.0.1",
  "198.19.0.1",
  "198.19.255.255",
  "192.168.0.1",
  "192.168.255.1",
  "169.254.0.1",
  "169.254.169.254",
  "169.254.255.1",
  // IPv4 inside IPv6: mapped (dotted, as Deno writes a DNS answer, and hex), 6to4 of 10.0.8.8.
  "::ffff:10.0.8.8",
  "::ffff:192.168.255.1",
  "::ffff:a00:808",
  "2002:a00:808:808::1",
  "2002:c0a8:101::1",
  // IPv6 special prefixes, away from their first address.
  "::1:ffff:808:808",
  "2001:db8:1::1",
  "2001:db8:ffff::1",
  "3fff:fff::1",
  "2001:2:0:1::1",
  "4000::1",
  "fb00::1",
  "64:ff9b:1::808:808",
  "fc00::1",
  "fe80::1",
  "ff02::1",
];

const PUBLIC = [
  "8.8.8.8",
  "223.255.255.255",
  "198.17.255.255",
  "198.20.0.1",
  "192.167.255.255",
  "192.169.0.1",
  "169.253.255.255",
  "169.255.0.1",
  "::ffff:8.8.8.8",
  "2002:808:808::1",
  "64:ff9b::808:808",
  "2001:4860:4860::8888",
  "3fff:1000::1",
  "2001:db9::1",
  "2001:2:1::1",
];

Deno.test("isPublicAddress: every special range at its edges, and IPv4 carried in IPv6", () => {
  for (const a of NOT_PUBLIC) assert.equal(isPublicAddress(a), false, a);
  for (const a of PUBLIC) assert.equal(isPublicAddress(a), true, a);
});
