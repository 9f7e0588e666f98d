/**
 * Operator-side edges no other test reaches: an admin API body of only whitespace, the admin
 * CLI's PUBLIC_URL warning for a reset link, the page `deno task parse` echoes when a page's link
 * names page 0, the CLI's output writer (its one waiting note, where its chunks end), the
 * /readyz timer, and how deep a watch body's 422 echoes a value.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { adminApi, adminTaskEnv, withStore } from "./admin_calls.ts";
import { fixtureBytes } from "./fixture.ts";
import { parseBytes } from "./parse_task.ts";
import { writeAll } from "../cli/output.ts";
import { bulk } from "./bulk_plan.ts";

const TOKEN = "operator-edges-admin-token-0123456789";

Deno.test("admin API: a body of only whitespace is an empty object, so a key is made with its defaults", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const admin = adminApi(TOKEN);
  const account = await admin(s, "POST", "/admin/accounts", { email: "blank@example.com" });
  assert.equal(account.status, 201);
  const r = await fetch(`${s.url}/admin/accounts/${account.body.id}/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: " \n\t \r\n",
  });
  const body = await r.json();
  assert.equal(r.status, 201, JSON.stringify(body));
  assert.equal(body.mode, "live");
  // Text that is not JSON is still refused.
  const junk = await fetch(`${s.url}/admin/accounts/${account.body.id}/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: "  x  ",
  });
  assert.equal(junk.status, 400);
  assert.equal((await junk.json()).error.code, "invalid_json");
});

/** `deno task admin ARGS` on `kvPath`, with PUBLIC_URL set to `publicUrl` or absent. */
function admin(kvPath: string, publicUrl: string | null, ...args: string[]) {
  return adminTaskEnv(kvPath, { PUBLIC_URL: publicUrl }, ...args);
}

Deno.test("admin CLI: a reset link made without PUBLIC_URL warns that it names localhost; with it, no warning", async () => {
  await withStore(async (kvPath) => {
    const created = await admin(kvPath, null, "account", "create", "--email", "owner@example.com");
    assert.equal(created.code, 0, created.stderr);
    const id = JSON.parse(created.stdout).account.id;

    const bare = await admin(kvPath, null, "account", "reset-link", id);
    assert.equal(bare.code, 0, bare.stderr);
    assert.match(JSON.parse(bare.stdout).url, /^http:\/\/localhost:8000\/dashboard\/reset\?token=/);
    assert.match(
      bare.stderr,
      /^admin: PUBLIC_URL is not set: the link names http:\/\/localhost:8000; run the CLI with the service's settings$/m,
    );

    const set = await admin(kvPath, "https://shelf.example", "account", "reset-link", id);
    assert.equal(set.code, 0, set.stderr);
    assert.match(JSON.parse(set.stdout).url, /^https:\/\/shelf\.example\/dashboard\/reset\?token=/);
    assert.doesNotMatch(set.stderr, /PUBLIC_URL/);
  });
});

/** `deno task parse` of a saved reviews page whose canonical link is `href`: an older review address. */
async function parseReviewsLinked(href: string) {
  const html = new TextDecoder().decode(
    await fixtureBytes("reviews/amazon.com__jachet-B01IPHVFUI.html"),
  );
  const canonical = /(<link rel="canonical" href=")[^"]*(")/;
  assert.match(html, canonical);
  return await parseBytes(
    new TextEncoder().encode(html.replace(canonical, `$1${href}$2`)),
    ".html",
  );
}

Deno.test("deno task parse: a page whose link names page 0 is echoed as page 1, a valid page number as itself", async () => {
  // Not a /product-reviews/ASIN link, so the page states no number of its own: the link's is used.
  for (const [n, want] of [[0, 1], [2, 2]]) {
    const out = await parseReviewsLinked(
      `https://www.amazon.com/review/product/B01IPHVFUI?pageNumber=${n}`,
    );
    assert.equal(out.code, 0, out.stderr);
    const answer = JSON.parse(out.stdout);
    assert.equal(answer.asin, "B01IPHVFUI");
    assert.equal(answer.page, want, `pageNumber=${n}`);
  }
});

/** Date.now moved on by `ahead` ms while `use` runs. */
async function withClock<T>(use: (move: (ms: number) => void) => Promise<T>): Promise<T> {
  const realNow = Date.now;
  let ahead = 0;
  Date.now = () => realNow() + ahead;
  try {
    return await use((ms) => (ahead += ms));
  } finally {
    Date.now = realNow;
  }
}

Deno.test("admin CLI output: the note that the CLI waits for its reader is given once, however long the reader stalls", async () => {
  // A write that stays pending while the clock runs on 50 s (within the minute a reader is given).
  const pendingNotes = await withClock(async (move) => {
    let notes = 0;
    const stalled = {
      write: async (p: Uint8Array) => {
        move(50_000);
        await new Promise((r) => setTimeout(r, 300));
        return p.length;
      },
    };
    await writeAll(stalled, "one line of an account list\n", undefined, () => notes++);
    return notes;
  });
  assert.equal(pendingNotes, 1);

  // A non-blocking stream that is full (EAGAIN) again and again, for 10 s each time.
  const fullNotes = await withClock(async (move) => {
    let notes = 0;
    let refusals = 0;
    const full = {
      write: (p: Uint8Array) => {
        if (refusals++ < 5) {
          move(10_000);
          return Promise.reject(new Deno.errors.WouldBlock("full"));
        }
        return Promise.resolve(p.length);
      },
    };
    await writeAll(full, "one line of an account list\n", undefined, () => notes++);
    return notes;
  });
  assert.equal(fullNotes, 1);
});

Deno.test("admin CLI output: a chunk that starts with a line break ends after it, so no chunk but the last holds part of a line", async () => {
  // A line longer than a chunk (4 KiB) is cut mid-line; the next chunk then starts with the
  // line break that ends it, and the line after it is as long again.
  const text = "a".repeat(4_096) + "\n" + "b".repeat(5_000) + "\n" + "c".repeat(10) + "\n";
  const chunks: string[] = [];
  const reader = {
    write: (p: Uint8Array) => {
      chunks.push(new TextDecoder().decode(p));
      return Promise.resolve(p.length);
    },
  };
  await writeAll(reader, text);
  assert.equal(chunks.join(""), text);
  assert.equal(chunks[1], "\n", `chunk lengths ${chunks.map((c) => c.length)}`);
  for (const c of chunks.slice(0, -1)) {
    assert.ok(
      !c.includes("\n") || c.endsWith("\n"),
      `a chunk holds a line break and then part of a line: ${chunks.map((c) => c.length)}`,
    );
  }
});

Deno.test({
  name: "/readyz leaves no timer behind once the store has answered",
  // The ops sanitizer is what sees a timer still pending when the test ends.
  sanitizeOps: true,
  async fn() {
    await using s = await startServer();
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${s.url}/readyz`);
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), { status: "ready" });
    }
  },
});

const plans = bulk(1_000);

Deno.test("watches API: a 422 echoes a value nested four deep as sent, and one nested five deep as null", async () => {
  await using s = await startServer({
    watches: { resolve: () => Promise.resolve(["93.184.216.34"]) },
    plans,
  });
  const { key } = await s.account("bulk");
  const good = {
    asin: "B07H57DNVV",
    every_seconds: 3600,
    webhook_url: "https://hooks.example.com/shelf",
    on: ["price"],
  };
  const echo = async (extra: unknown) => {
    const r = await fetch(`${s.url}/v1/watches`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ ...good, extra }),
    });
    assert.equal(r.status, 422);
    const entry = (await r.json()).detail.find((e: { loc: unknown[] }) => e.loc[1] === "extra");
    assert.equal(entry.type, "extra_forbidden");
    return entry.input;
  };
  assert.deepEqual(await echo([[[["x"]]]]), [[[["x"]]]]);
  assert.deepEqual(await echo({ a: { b: { c: { d: 1 } } } }), { a: { b: { c: { d: 1 } } } });
  assert.equal(await echo([[[[["x"]]]]]), null);
  assert.equal(await echo({ a: { b: { c: { d: { e: 1 } } } } }), null);
  assert.equal(s.errors.length, 0, s.errors.join("\n"));
});
