/**
 * The password work queue (metering/passwords.ts): work waits in turns by client network, at
 * most 16 of one network; past the queue's 256, only a network with nothing waiting still gets
 * in line, so that 17 networks cannot fill it for everyone else. Real scrypt on the thread pool.
 */
import assert from "node:assert/strict";
import { PasswordWorkBusy, verifyPassword } from "../metering/passwords.ts";

Deno.test("seventeen networks with sixteen waiting each still leave a place in line for another network", async () => {
  const flood: Promise<unknown>[] = [];
  for (let net = 0; net < 17; net++) {
    for (let i = 0; i < 18; i++) {
      // Each network's last ones are past its own bound: refused at once.
      const client = { address: `2001:db8:${net}:${i}::/64`, network: `2001:db8:${net}::/48` };
      flood.push(verifyPassword("not the password", null, client).catch((e) => e));
    }
  }
  const mine = verifyPassword("not the password", null, {
    address: "198.51.100.20",
    network: null,
  }).then(
    () => "checked",
    (e) => (e instanceof PasswordWorkBusy ? "refused" : e),
  );
  const settled = await Promise.all(flood);
  const refused = settled.filter((e) => e instanceof PasswordWorkBusy).length;
  assert.ok(refused >= 17 * 2, `each network's work past its bound is refused (${refused})`);
  assert.equal(await mine, "checked", "another network's sign-in is checked, not refused");
});
