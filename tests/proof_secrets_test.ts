/**
 * Proof 6, secrets: key values never reach the store, the logs or an error body; `api_key` in the
 * query leaves no trace in the logs; missing, malformed, unknown and revoked keys get one and the
 * same 401; the admin token is compared in constant time and the admin API is absent without
 * ADMIN_TOKEN; `/v1/scrape` refuses every URL that is not a marketplace page (422, uncharged),
 * and a marketplace redirect to another host is an uncharged error with no request sent there.
 */
import assert from "node:assert/strict";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { type ShelfProcess, spawnShelf } from "./proof/shelf_process.ts";
import { plansFile } from "./proof/plans_file.ts";
import { createAccount, usedCredits } from "./proof/admin_client.ts";
import { adminCli } from "./proof/admin_cli.ts";
import { type Answer, hit, json, tempKv } from "./proof/http.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { errorShapeProblem } from "./proof/error_shape.ts";
import { scanForSecrets } from "./proof/secrets.ts";
import { report } from "./proof/figures.ts";
import { generateKey } from "../metering/api_key.ts";
import { marketplaceForHost } from "../schemas/marketplaces.ts";

const PRODUCT = "product/amazon.com__app-B07H57DNVV.html";

/**
 * URLs /v1/scrape must refuse at validation: other hosts, IP literals, userinfo, ports, schemes.
 * (Not here: `https://www.amazon.com\\@evil.example/`, which URL parsers read as a path on
 * www.amazon.com, so it is a marketplace page, as a browser would also see it.)
 */
const FOREIGN = [
  "http://127.0.0.1/",
  "http://127.0.0.1:8000/v1/usage",
  "http://localhost/",
  "http://[::1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://169.254.169.254/latest/meta-data/",
  "http://2130706433/",
  "http://0x7f000001/",
  "http://0177.0.0.1/",
  "http://10.0.0.1/",
  "https://evil.example/dp/B07H57DNVV",
  "https://www.amazon.com@evil.example/",
  "https://www.amazon.com:443@evil.example/",
  "https://user:pass@www.amazon.com/dp/B07H57DNVV",
  "https://www.amazon.com%40evil.example/",
  "https://evil.example\\@www.amazon.com/",
  "https://evil.example#@www.amazon.com/",
  "https://evil.example?@www.amazon.com/",
  "https://www.amazon.com.evil.example/",
  "https://amazon.com.evil.example/",
  "https://evilamazon.com/",
  "https://www.amazon.com:8080/",
  "https://www.amazon.com:444/dp/B07H57DNVV",
  "http://www.amazon.com:443/",
  "https://www.аmazon.com/", // Cyrillic а
  "https://www.amazon.co/",
  "https://www.amazon.evil/",
  "ftp://www.amazon.com/",
  "file:///etc/passwd",
  "javascript:alert(1)",
  "data:text/html,<h1>x</h1>",
  "//www.amazon.com/dp/B07H57DNVV",
  "www.amazon.com/dp/B07H57DNVV",
  "/dp/B07H57DNVV",
  "",
];

async function secretsRun() {
  await using fake = new FakeMarketplace();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", PRODUCT);
  fake.redirect("https://www.amazon.com/dp/B0REDIR001", "https://evil.example/steal");
  fake.redirect("https://www.amazon.com/dp/B0REDIR002", "http://127.0.0.1:1/admin");
  fake.redirect(
    "https://www.amazon.com/dp/B0REDIR003",
    "https://www.amazon.com@evil.example/dp/B07H57DNVV",
  );
  fake.redirect("https://www.amazon.com/dp/B0REDIR004", "//evil.example/dp/B07H57DNVV");
  const kvPath = await tempKv();
  const plans = await plansFile(1_000, 1_000);
  const token = `admin-${crypto.randomUUID()}`;
  const env = { KV_PATH: kvPath, UPSTREAM: fake.upstream, PLANS_FILE: plans };
  const servers: ShelfProcess[] = [];
  const bodies: Answer[] = [];
  const keys: string[] = [];
  try {
    const withAdmin = await spawnShelf({ ...env, ADMIN_TOKEN: token });
    servers.push(withAdmin);
    const base = withAdmin.url;
    const { key, keyId } = await createAccount(base, token);
    const second = await createAccount(base, token);
    keys.push(key, second.key);

    // One 401 for every way a key can be wrong.
    const revokedKey = second.key;
    const revoke = await fetch(`${base}/admin/keys/${second.keyId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(revoke.status, 200);
    const wrong = {
      missing: await hit(base, "/v1/deals", null),
      malformed: await hit(base, "/v1/deals", "shelf_live_xyz"),
      unknown: await hit(base, "/v1/deals", generateKey("live")),
      revoked: await hit(base, "/v1/deals", revokedKey),
      "revoked in query": await hit(base, `/v1/deals?api_key=${revokedKey}`, null),
      "revoked, valid query": await hit(base, "/v1/products/details?asin=B07H57DNVV", revokedKey),
    };
    bodies.push(...Object.values(wrong));
    for (const [what, a] of Object.entries(wrong)) {
      assert.equal(a.status, 401, what);
      assert.equal(a.text, wrong.missing.text, `${what}: the body must be the one every 401 gets`);
    }

    // The key in the query on success and on errors: nothing of it may reach the logs or a body.
    const viaQuery = [
      await hit(base, `/v1/products/details?asin=B07H57DNVV&api_key=${key}`, null),
      await hit(base, `/v1/products/details?asin=bad&api_key=${key}`, null),
      await hit(base, `/v1/products/details?asin=B000000000&api_key=${key}`, null),
      await hit(base, `/v1/nowhere?api_key=${key}`, null),
    ];
    bodies.push(...viaQuery);
    assert.deepEqual(viaQuery.map((a) => a.status), [200, 422, 404, 404]);

    // The admin API compares the token in constant time: wrong tokens of any length are a 401.
    for (const t of ["", "x", token.slice(0, -1), token + "x", "y".repeat(10_000)]) {
      const r = await fetch(`${base}/admin/accounts/nobody`, {
        headers: { authorization: `Bearer ${t}` },
      });
      bodies.push({
        status: r.status,
        text: await r.text(),
        headers: r.headers,
        sentAt: 0,
        doneAt: 0,
      });
      assert.equal(r.status, 401, `token of length ${t.length}`);
    }
    const source = await Deno.readTextFile(new URL("../routes/admin.ts", import.meta.url));
    assert.match(source, /import \{ timingSafeEqual \} from "node:crypto"/);
    assert.match(source, /const expected = Buffer\.from\(hashKey\(adminToken\), "hex"\)/);
    assert.match(source, /const given = Buffer\.from\(hashKey\([^)]*\), "hex"\)/);
    assert.match(source, /if \(!timingSafeEqual\(given, expected\)\)/);
    assert.doesNotMatch(
      source,
      /(===|!==)\s*(adminToken|expected)|(adminToken|expected)\s*(===|!==)/,
    );

    // /v1/scrape: every foreign URL is a 422 on `url`, uncharged.
    const scrape = (url: string) => hit(base, `/v1/scrape?url=${encodeURIComponent(url)}`, key);
    const usedBefore = await usedCredits(base, key);
    const refused: string[] = [];
    for (const url of FOREIGN) {
      const a = await scrape(url);
      bodies.push(a);
      const detail = (json(a) as { detail?: { loc: string[] }[] })?.detail;
      if (a.status !== 422 || errorShapeProblem(422, json(a)) || detail?.[0]?.loc[1] !== "url") {
        refused.push(`${url} → ${a.status} ${a.text.slice(0, 120)}`);
      }
      assert.equal(a.headers.get("x-credits-cost"), "0", url);
    }
    assert.deepEqual(refused, [], "every non-marketplace URL must be a 422 on url");
    // A marketplace page that redirects off the marketplace hosts: an uncharged error, nothing sent there.
    const redirects = [];
    for (
      const path of [
        "/v1/scrape?url=https://www.amazon.com/dp/B0REDIR001",
        "/v1/products/details?asin=B0REDIR002",
        "/v1/scrape?url=https://www.amazon.com/dp/B0REDIR003",
        "/v1/products/details?asin=B0REDIR004",
      ]
    ) {
      const a = await hit(base, path, key);
      bodies.push(a);
      redirects.push(a.status);
      assert.equal(a.status, 502, `${path}: ${a.text}`);
      assert.equal(errorShapeProblem(502, json(a)), null);
      assert.equal(a.headers.get("x-credits-cost"), "0");
    }
    assert.equal(
      await usedCredits(base, key),
      usedBefore,
      "refused scrapes and redirects are not charged",
    );
    const hosts = new Set(fake.requests.map((r) => r.host));
    assert.ok(
      [...hosts].every((h) => marketplaceForHost(h)),
      `a request left the marketplace hosts: ${[...hosts]}`,
    );
    assert.equal(fake.pageRequests("/steal"), 0);

    // Without ADMIN_TOKEN there is no admin API: /admin answers as an unknown path.
    const noAdmin = await spawnShelf(env);
    servers.push(noAdmin);
    for (
      const [method, path] of [["POST", "/admin/accounts"], ["GET", "/admin/accounts/x"], [
        "DELETE",
        `/admin/keys/${keyId}`,
      ]]
    ) {
      const r = await fetch(noAdmin.url + path, {
        method,
        headers: { authorization: `Bearer ${token}` },
        body: method === "POST" ? "{}" : undefined,
      });
      const text = await r.text();
      assert.equal(r.status, 404, `${method} ${path} without ADMIN_TOKEN`);
      assert.equal(JSON.parse(text).error.code, "not_found");
    }
    // …and the CLI on the same store is what an operator uses instead; its key works there.
    const cli = await adminCli(
      { KV_PATH: kvPath, PLANS_FILE: plans },
      "account",
      "create",
      "--email",
      `cli-${crypto.randomUUID()}@example.com`,
      "--plan",
      "proof",
    );
    const cliKey = (cli.key as { key: string }).key;
    keys.push(cliKey);
    assert.equal(
      (await hit(noAdmin.url, "/v1/products/details?asin=B07H57DNVV", cliKey)).status,
      200,
    );

    for (const s of servers) await s[Symbol.asyncDispose]();
    const logs = servers.map((s) => s.logs());
    const scan = await scanForSecrets({
      keys,
      kvPaths: [kvPath],
      logs,
      bodies: bodies.map((b) => b.text),
    });
    const figures = {
      "401 variants with one body": Object.keys(wrong).length,
      "foreign scrape URLs refused (422)": FOREIGN.length - refused.length,
      "off-host redirects (uncharged 502)": redirects.length,
      "KV entries scanned": scan.kvEntries,
      "log bytes scanned": scan.logBytes,
      "bodies scanned": scan.bodies,
      "key values found": scan.hits.length,
      "server log lines": logs.join("\n").split("\n").filter(Boolean).length,
    };
    console.log(figures, logs);
    assert.deepEqual(scan.hits, [], "a key value leaked");
    report("6. secrets and SSRF", figures);
  } finally {
    for (const s of servers) await s[Symbol.asyncDispose]();
    await removeKvFiles(kvPath);
    await Deno.remove(plans).catch(() => {});
  }
}

Deno.test("proof: no key value in the store, logs or error bodies; one 401 body; constant-time admin token; scrape refuses foreign hosts", async () => {
  await secretsRun();
});
