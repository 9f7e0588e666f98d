/**
 * An account's creation whose commit landed but whose reply was lost (the commit threw: "database
 * is locked" after landing, a dropped connection to a remote store) answers with the account, not
 * 409 `email_taken` for the caller's own new account: the try after the throw finds the email
 * taken, by this very creation. Real KV file; the store wrapped only to lose one commit's reply.
 */
import assert from "node:assert/strict";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { withCommits } from "./counted_kv.ts";

Deno.test("a creation whose commit landed but threw answers with the new account, not email_taken", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const real = await Deno.openKv(path);
  try {
    let lost = 0;
    const kv = withCommits(real, async (commit) => {
      const r = await commit();
      if (lost++ === 0) throw new Error("database is locked"); // landed, reply lost
      return r;
    });
    const accounts = new Accounts(kv, builtinPlans(), systemClock);
    const created = await accounts.create("lost@example.com", "starter");
    assert.equal(lost, 1, "only the commit whose reply was lost");
    assert.equal(created.email, "lost@example.com");
    assert.equal(await accounts.idByEmail("lost@example.com"), created.id);
    assert.equal((await accounts.get(created.id)).plan, "starter");
  } finally {
    real.close();
    await removeKvFiles(path);
  }
});
