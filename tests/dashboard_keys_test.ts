/**
 * The dashboard's create-key form over real HTTP: a form sent again creates no second key, and
 * what makes that so does not grow the store with each form sent (probe BZ: one entry per form,
 * kept 24 h, let a create-and-revoke loop add about 170 MB a day). Real server, real KV file.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { type Browser, browser, signUpOpen } from "./dashboard_client.ts";
import { KEPT_ONCE_TOKENS } from "../metering/accounts.ts";

const FORM_ID = /name="form_id" value="([0-9a-f]{32})"/;
const pause = () => new Promise((r) => setTimeout(r, 150)); // under the dashboard's 20 a second

Deno.test("a resent create-key form creates nothing, and forms sent leave nothing in the store", async () => {
  await using s = await startServer({ signup: "open" });
  const b = browser(s.url);
  const email = `forms${Date.now()}@example.com`;
  await signUpOpen(b, email);
  const [me] = (await s.accounts.list({ email })).accounts;
  await s.accounts.update(me.id, { plan: "scale" }); // room for keys: the limit is not what refuses

  const entries = async () => {
    let n = 0;
    for await (const _ of s.kv.list({ prefix: [] })) n++;
    return n;
  };
  /** Creates a key with the form as the page gave it (with its id or not), then revokes it. */
  const cycle = async (b: Browser, withId: boolean) => {
    const page = await b.send("/dashboard/keys");
    const formId = FORM_ID.exec(page.text)?.[1];
    assert.ok(formId, "the form carries an id");
    const form = {
      _csrf: page.csrf,
      name: "loop",
      mode: "live",
      ...(withId ? { form_id: formId } : {}),
    };
    const created = await b.send("/dashboard/keys", { form });
    assert.equal(created.status, 200);
    const [key] = (await s.accounts.listKeys(me.id)).filter((k) => k.status === "active");
    const revoked = await b.send(`/dashboard/keys/${key.id}/revoke`, {
      form: { _csrf: page.csrf },
    });
    assert.equal(revoked.status, 303);
    await pause();
    return { form, formId };
  };

  const before = await entries();
  await cycle(b, false);
  const perCycle = (await entries()) - before; // what a key created and revoked leaves
  const sent = [];
  for (let i = 0; i < KEPT_ONCE_TOKENS + 2; i++) sent.push(await cycle(b, true));
  assert.equal(
    (await entries()) - before,
    perCycle * (KEPT_ONCE_TOKENS + 3),
    "a form id adds nothing to what the key itself leaves",
  );

  // The last forms sent again: refused, nothing created.
  for (const { form } of sent.slice(-KEPT_ONCE_TOKENS)) {
    const again = await b.send("/dashboard/keys", { form });
    assert.equal(again.status, 409);
    assert.match(again.text, /this form was sent before/);
    assert.ok(!/id="new-key-value"/.test(again.text), "no key value shown");
    await pause();
  }
  const keys = await s.accounts.listKeys(me.id);
  assert.equal(keys.length, KEPT_ONCE_TOKENS + 3, "one key per form, none for the resends");
  assert.equal(keys.filter((k) => k.status === "active").length, 0);
  assert.equal((await s.accounts.get(me.id)).key_once?.length, KEPT_ONCE_TOKENS);
});
