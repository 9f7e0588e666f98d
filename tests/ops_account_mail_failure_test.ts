/**
 * An account mail (sign-up confirmation, reset, alert address) is sent after the answer: a mail
 * server that refuses the connection at send time is one error line, and the process keeps
 * serving ("never a crash": an unhandled rejection would end it).
 */
import assert from "node:assert/strict";
import { freePort, spawnShelf } from "./proof/shelf_process.ts";
import { browser } from "./dashboard_client.ts";

Deno.test("a sign-up mail the mail server refuses is logged, and the process keeps serving and stops cleanly", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      SIGNUP: "verify",
      // Nothing listens there: the connection is refused when the mail is sent.
      SMTP_URL: `smtp://127.0.0.1:${freePort()}`,
      PUBLIC_URL: "https://shelf.example.com",
    });
    try {
      const b = browser(shelf.url);
      const page = await b.send("/dashboard/signup");
      const r = await b.send("/dashboard/signup", {
        form: {
          _csrf: page.csrf,
          email: `u${crypto.randomUUID()}@example.com`,
          password: "correct horse battery",
        },
      });
      assert.ok(r.status < 500, `${r.status}`);
      const until = Date.now() + 10_000;
      while (!/sign-up mail failed|Uncaught/.test(shelf.logs()) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(shelf.logs(), /\[shelf\] sign-up mail failed /);
      // Give an unhandled rejection time to end the process, then ask it something.
      await new Promise((r) => setTimeout(r, 300));
      const v1 = await fetch(`${shelf.url}/v1/`);
      assert.equal(v1.status, 200);
      await v1.body?.cancel();
      assert.doesNotMatch(shelf.logs(), /Uncaught/);
    } finally {
      assert.equal(await shelf.stop("SIGTERM"), 0, shelf.logs());
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
