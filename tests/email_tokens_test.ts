/**
 * Mailed tokens are spent once (metering/email_tokens.ts): two clicks of one link that both read
 * it before either acts race, and only one acts (probe GV: nothing raced two uses of one token).
 */
import assert from "node:assert/strict";
import { issueToken, readToken } from "../metering/email_tokens.ts";

Deno.test("a mailed token read twice before either use is spent by one use only", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const now = Date.now();
    for (const kind of ["reset", "signup", "alert"] as const) {
      const token = await issueToken(kv, kind, { account: "acc_1" }, now);
      const first = await readToken<{ account: string }>(kv, kind, token, now);
      const second = await readToken<{ account: string }>(kv, kind, token, now);
      assert.ok(first && second, kind);
      const use = (t: typeof first, what: string) =>
        t.spend(kv.atomic()).set(["used_by", kind], what).commit();
      assert.equal((await use(first, "first")).ok, true, kind);
      assert.equal((await use(second, "second")).ok, false, `${kind}: spent twice`);
      assert.equal((await kv.get(["used_by", kind])).value, "first");
      assert.equal(await readToken(kv, kind, token, now), null, `${kind}: still readable`);
    }
  } finally {
    kv.close();
  }
});
