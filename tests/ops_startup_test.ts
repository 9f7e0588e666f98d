/**
 * Start-up as operators meet it (issues 13.14, 13.15, 14.5): one line naming version, address,
 * store, upstream mode, sign-up mode and page workers; a setting or store that cannot be used is
 * one line on stderr and exit code 1, never a stack trace or a served 503.
 */
import assert from "node:assert/strict";
import { freePort, spawnShelf, startFails } from "./proof/shelf_process.ts";
import { createAccount } from "./proof/admin_client.ts";
import { FakeMarketplace } from "./fake_marketplace.ts";
import { receiver } from "./webhook_receiver.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { openStore, StoreError } from "../config.ts";
import { DatabaseSync } from "node:sqlite";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

function oneLine(r: { code: number; stderr: string; stdout: string }, pattern: RegExp) {
  assert.equal(r.code, 1, r.stderr + r.stdout);
  const lines = r.stderr.split("\n").filter((l) => l.trim());
  assert.equal(lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack trace");
  assert.doesNotMatch(r.stdout, /listening/, "never served");
}

Deno.test("a store that cannot be opened or written ends start-up with one line and exit code 1", async () => {
  const dir = await Deno.makeTempDir();
  const corrupt = `${dir}/corrupt.kv`;
  await Deno.writeFile(corrupt, crypto.getRandomValues(new Uint8Array(8192)));
  await Deno.mkdir(`${dir}/a-directory.kv`);
  const paths = [`${dir}/a-directory.kv`, corrupt, "/proc/version", "/proc/shelf/shelf.kv"];
  // A read-only store: root ignores file modes, so the file is made immutable where chattr can.
  const readOnly = `${dir}/read-only.kv`;
  const kv = await Deno.openKv(readOnly);
  await kv.set(["x"], 1);
  kv.close();
  const immutable = await new Deno.Command("chattr", {
    args: ["+i", readOnly, dir],
    stderr: "null",
  }).output().then((o) => o.success, () => false);
  if (immutable) paths.push(readOnly);
  try {
    for (const kvPath of paths) {
      oneLine(
        await startFails({ KV_PATH: kvPath }),
        /^shelf: Cannot (open|write to) the store at /,
      );
    }
  } finally {
    if (immutable) await new Deno.Command("chattr", { args: ["-i", readOnly, dir] }).output();
    await Deno.remove(dir, { recursive: true });
  }
});

/** chattr +i binds root too; without it (not root, or a file system without it) the case is ignored. */
async function canMakeImmutable(): Promise<boolean> {
  const file = await Deno.makeTempFile();
  const run = (flag: string) =>
    new Deno.Command("chattr", { args: [flag, file], stderr: "null" }).output()
      .then((o) => o.success, () => false);
  const ok = await run("+i");
  if (ok) await run("-i");
  await Deno.remove(file);
  return ok;
}

Deno.test({
  name: "a store that opens and reads but refuses writes fails the start-up probe, unserved",
  ignore: !(await canMakeImmutable()),
  async fn() {
    // Only the file is immutable: SQLite opens it read-only (its directory still takes the -wal
    // and -shm files), reads work, and the first write fails. Without the probe Shelf starts
    // and serves on a store it cannot write.
    const dir = await Deno.makeTempDir();
    const readOnly = `${dir}/read-only.kv`;
    const kv = await Deno.openKv(readOnly);
    await kv.set(["x"], 1);
    kv.close();
    await new Deno.Command("chattr", { args: ["+i", readOnly] }).output();
    try {
      oneLine(
        await startFails({ KV_PATH: readOnly }),
        /^shelf: Cannot write to the store at .*read-only\.kv: /,
      );
    } finally {
      await new Deno.Command("chattr", { args: ["-i", readOnly] }).output();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("a short ADMIN_TOKEN and other bad settings end start-up with one line and exit code 1", async () => {
  const dir = await Deno.makeTempDir();
  const kv = `${dir}/s.kv`;
  oneLine(
    await startFails({ KV_PATH: kv, ADMIN_TOKEN: "x".repeat(23) }),
    /ADMIN_TOKEN.*at least 24 characters/,
  );
  oneLine(await startFails({ KV_PATH: kv, PORT: "99999" }), /PORT/);
  oneLine(await startFails({ KV_PATH: kv, PLANS_FILE: `${dir}/missing.json` }), /PLANS_FILE/);
  await Deno.writeTextFile(
    `${dir}/bad.json`,
    JSON.stringify({ plans: [{ id: "x", credits: -1 }] }),
  );
  oneLine(
    await startFails({ KV_PATH: kv, PLANS_FILE: `${dir}/bad.json` }),
    /PLANS_FILE.*plan catalog/,
  );
  oneLine(await startFails({ KV_PATH: kv, UPSTREAM: "ftp://x" }), /UPSTREAM/);
  oneLine(await startFails({ KV_PATH: kv, SIGNUP: "verify" }), /SIGNUP/);
  oneLine(await startFails({ KV_PATH: kv, TRUST_PROXY: "yes" }), /TRUST_PROXY/);
  oneLine(await startFails({ KV_PATH: kv, DRAIN_SECONDS: "-1" }), /DRAIN_SECONDS/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("start-up prints one line naming version, address, store, upstream mode, sign-up mode and workers", async () => {
  const dir = await Deno.makeTempDir();
  {
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      ADMIN_TOKEN: "startup-token-0123456789abcdef",
    });
    const line = shelf.logs().split("\n").find((l) => l.includes("listening")) ?? "";
    assert.match(line, /^Shelf \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+\//);
    assert.ok(line.includes(`store ${dir}/s.kv`), line);
    assert.match(line, /upstream origin/);
    assert.match(line, /sign-up closed/, "closed is the default without SMTP_URL");
    assert.match(line, /parse workers \d+/);
    assert.doesNotMatch(line, /a{24}/, "no secret in the start-up line");
    assert.doesNotMatch(shelf.logs(), /PUBLIC_URL/, "no mail, no word of PUBLIC_URL");
  }
  {
    // With a mail server but no PUBLIC_URL, mailed links would point at localhost (probe DS).
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/m.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      SMTP_URL: "smtp://127.0.0.1:9",
    });
    assert.match(
      shelf.logs(),
      /'PUBLIC_URL' is not set: links in mails point at http:\/\/localhost:\d+\/, which users cannot open/,
    );
    assert.doesNotMatch(shelf.logs(), /TRUST_PROXY/);
  }
  {
    // TRUST_PROXY on every address: direct clients could forge their address (probe DU).
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/t.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      HOST: "0.0.0.0",
      TRUST_PROXY: "1",
    });
    assert.match(shelf.logs(), /'TRUST_PROXY' is set while listening on 0\.0\.0\.0/);
  }
  await Deno.remove(dir, { recursive: true });
});

/** Every key of a store with its versionstamp (the start-up probe leaves none behind). */
async function storeState(kvPath: string): Promise<string[]> {
  const kv = await Deno.openKv(kvPath);
  try {
    const out: string[] = [];
    for await (const e of kv.list({ prefix: [] })) {
      out.push(
        `${JSON.stringify(e.key, (_, v) => typeof v === "bigint" ? `${v}n` : v)} ${e.versionstamp}`,
      );
    }
    return out;
  } finally {
    kv.close();
  }
}

Deno.test("a PORT in use ends start-up with one line and exit code 1, before any watch is refreshed or webhook sent", async () => {
  await using fake = new FakeMarketplace();
  await using hook = receiver();
  fake.page("https://www.amazon.com/dp/B07H57DNVV", "product/amazon.com__app-B07H57DNVV.html");
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const token = `startup-${crypto.randomUUID()}`;
  const settings = {
    KV_PATH: kvPath,
    UPSTREAM: fake.upstream,
    ADMIN_TOKEN: token,
    WATCH_MIN_SECONDS: "1",
    WEBHOOK_ALLOW_PRIVATE: "1",
  };
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    // A store with a watch due every second, as a second `deno task start` would find it.
    const first = await spawnShelf(settings);
    try {
      const { key } = await createAccount(first.url, token, "growth");
      const r = await fetch(`${first.url}/v1/watches`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({
          asin: "B07H57DNVV",
          every_seconds: 1,
          webhook_url: hook.url,
          on: ["price"],
        }),
      });
      assert.equal(r.status, 201);
      await r.body?.cancel();
      const until = Date.now() + 15_000;
      while (fake.pageRequests("/dp/B07H57DNVV") < 1 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      assert.equal(await first.stop("SIGTERM"), 0);
    }
    const fetched = fake.pageRequests("/dp/B07H57DNVV");
    assert.ok(fetched >= 1, "the watch was refreshed by the instance that could listen");
    const delivered = hook.got.length;
    await new Promise((r) => setTimeout(r, 1_500)); // the watch is due again

    const before = await storeState(kvPath);
    const port = (taken.addr as Deno.NetAddr).port;
    const r = await startFails({ ...settings, PORT: String(port) });
    oneLine(
      r,
      new RegExp(
        `^shelf: Cannot start: cannot listen on 'HOST' 127\\.0\\.0\\.1 'PORT' ${port}: .*in use`,
      ),
    );
    assert.doesNotMatch(r.stdout, /listener_failed/, "no retries of a first bind");
    assert.equal(
      fake.pageRequests("/dp/B07H57DNVV"),
      fetched,
      "no watch refresh without a listener",
    );
    assert.equal(hook.got.length, delivered, "no webhook without a listener");
    assert.deepEqual(
      await storeState(kvPath),
      before,
      "nothing written to the store: no watch claimed, no webhook or mail settled",
    );
  } finally {
    taken.close();
    await removeKvFiles(kvPath);
  }
});

Deno.test("a HOST that cannot be listened on (malformed, not on this machine, not resolvable) ends start-up with one line naming HOST", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = `${dir}/s.kv`;
    oneLine(
      await startFails({ KV_PATH: kv, HOST: "999.1.1.1" }),
      /^shelf: Cannot start as 'HOST' /,
    );
    oneLine(await startFails({ KV_PATH: kv, HOST: "a b" }), /^shelf: Cannot start as 'HOST' /);
    oneLine(
      await startFails({ KV_PATH: kv, HOST: "192.0.2.1" }), // TEST-NET-1: no machine has it
      /^shelf: Cannot start: cannot listen on 'HOST' 192\.0\.2\.1 'PORT' \d+: /,
    );
    oneLine(
      await startFails({ KV_PATH: kv, HOST: "no-such-host.invalid" }),
      /^shelf: Cannot start: cannot listen on 'HOST' no-such-host\.invalid /,
    );
    assert.deepEqual([...Deno.readDirSync(dir)], [], "no store created for an instance unheard");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("start-up errors name the setting and never print a credential", async () => {
  const dir = await Deno.makeTempDir();
  const kv = `${dir}/s.kv`;
  const cases: [Record<string, string>, RegExp][] = [
    [{ SMTP_URL: "smtp://user:s3cretPW@exa mple.com:25" }, /'SMTP_URL'/],
    [{ SMTP_URL: "smtp://user:s3cretPW@mail.example.com:99999" }, /'SMTP_URL'/],
    [{ SMTP_URL: "s3cretPW" }, /'SMTP_URL'/],
    [{ SMTP_URL: "smtp://user:s3cretPW%E0%A4%A@mail.example.com:25" }, /'SMTP_URL'.*%-escape/],
    [{ SMTP_URL: "s3cretPW:x@mail.example.com" }, /'SMTP_URL'/],
    [{ UPSTREAM: "origin:http://u:s3cretPW@ho st" }, /'UPSTREAM'/],
    [{ UPSTREAM: "origin:ftp://u:s3cretPW@example.com/" }, /'UPSTREAM'/],
    [
      { UPSTREAM: "live", UPSTREAM_PROXIES: "http://user:s3cretPW@proxy.example:99999" },
      /'UPSTREAM_PROXIES' entry 1/,
    ],
    [
      { UPSTREAM: "live", UPSTREAM_PROXIES: "http://p.example:1,http://user:s3cretPW@ho st:1" },
      /'UPSTREAM_PROXIES' entry 2/,
    ],
    [
      { UPSTREAM: "live", HTTP_PROXY: "ftp://user:s3cretPW@proxy.example:21" },
      /'HTTP_PROXY' entry 1/,
    ],
    [
      { UPSTREAM: "live", UPSTREAM_COOKIES_US: "session=s3cretPW\r\nX-Injected: 1" },
      /'UPSTREAM_COOKIES_US'/,
    ],
    [{ ADMIN_TOKEN: "s3cretPW s3cretPW s3cretPW" }, /'ADMIN_TOKEN'/],
    [{ PUBLIC_URL: "https://user:s3cretPW@shelf.example/" }, /'PUBLIC_URL'/],
    [{ CORS_ORIGINS: "https://u:s3cretPW@x.example" }, /'CORS_ORIGINS'/],
    [{ CORS_ORIGINS: "https://s3cretPW@[x" }, /'CORS_ORIGINS'/],
    [{ KV_PATH: "HTTPS://user:s3cretPW@127.0.0.1:1/" }, /'KV_PATH'.*lower case/],
    [{ KV_PATH: "./a\ns3cretPW.kv" }, /'KV_PATH'.*control character/],
    [
      { KV_PATH: "https://127.0.0.1:1/?token=s3cretPW", DENO_KV_ACCESS_TOKEN: "t" },
      /^shelf: Cannot (open|write to) the store at https:\/\/127\.0\.0\.1:1\/: /,
    ],
    [
      { KV_PATH: "https://user:s3cretPW@127.0.0.1:1/", DENO_KV_ACCESS_TOKEN: "" },
      /^shelf: Cannot (open|write to) the store at https:\/\/127\.0\.0\.1:1\/: /,
    ],
    [
      // A raw "@" in the password: the user info ends at the LAST "@" before the host.
      { KV_PATH: "https://u:kv@s3cretPW@127.0.0.1:1/", DENO_KV_ACCESS_TOKEN: "t" },
      /^shelf: Cannot (open|write to) the store at https:\/\/127\.0\.0\.1:1\/: /,
    ],
  ];
  try {
    for (const [env, pattern] of cases) {
      const r = await startFails({ KV_PATH: kv, ...env });
      oneLine(r, pattern);
      assert.doesNotMatch(
        r.stderr + r.stdout,
        /s3cret/i,
        `a secret printed for ${JSON.stringify(env)}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("settings with silently wrong values are refused, and before the store is created", async () => {
  const dir = await Deno.makeTempDir();
  const kv = `${dir}/never/s.kv`;
  await Deno.writeTextFile(
    `${dir}/dup.json`,
    JSON.stringify({
      plans: [
        { id: "free", credits: 50, rate_limit_per_sec: 1, max_keys: 1, groups: ["products"] },
        { id: "free", credits: 999999, rate_limit_per_sec: 1, max_keys: 1, groups: ["scrape"] },
      ],
    }),
  );
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: "0x50a0" }, /'PORT'/],
    [{ PORT: "19e3" }, /'PORT'/],
    [{ PORT: " 19555 " }, /'PORT'/],
    [{ DRAIN_SECONDS: " " }, /'DRAIN_SECONDS'/],
    [{ DRAIN_SECONDS: "0x10" }, /'DRAIN_SECONDS'/],
    [{ PARSE_WORKERS: " " }, /'PARSE_WORKERS'/],
    [{ RESULT_CACHE: "0" }, /'RESULT_CACHE'/],
    [{ SMTP_URL: "smtp:xyz" }, /'SMTP_URL'.*no host/],
    [{ UPSTREAM: "origin:javascript:alert(1)" }, /'UPSTREAM'/],
    [{ UPSTREAM: "origin:ftp://example.com/" }, /'UPSTREAM'/],
    [{ UPSTREAM: `archive:${dir}/missing.warc` }, /'UPSTREAM'.*archive/],
    [{ ADMIN_TOKEN: " ".repeat(25) }, /'ADMIN_TOKEN'/],
    [{ PLANS_FILE: `${dir}/dup.json` }, /'PLANS_FILE'.*"free" appears twice/],
    [{ PLANS_FILE: "/dev/zero" }, /'PLANS_FILE'.*not a regular file/],
    [{ SMTP_URL: "smtp://127.0.0.1:25", SMTP_FROM: "not an address" }, /'SMTP_FROM'/],
    [{ SMTP_URL: "smtp://127.0.0.1:25", SMTP_FROM: "Shelf <a@b.example" }, /'SMTP_FROM'/],
    // A name holding a line break would write a header of its own (probe GT, M03).
    [
      { SMTP_URL: "smtp://127.0.0.1:25", SMTP_FROM: "Shelf\r\nBcc: x@evil.example <a@b.example>" },
      /'SMTP_FROM'/,
    ],
    [{ UPSTREAM_RECORD: `${dir}/no_such_dir/rec.warc` }, /'UPSTREAM_RECORD'.*appended to/],
  ];
  try {
    for (const [env, pattern] of cases) {
      oneLine(await startFails({ KV_PATH: kv, ...env }), pattern);
      assert.equal(
        await Deno.stat(`${dir}/never`).then(() => true, () => false),
        false,
        `the store was created before ${JSON.stringify(env)} was refused`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs `use` with a new KV file at `path` that another program (a SQLite transaction) holds locked. */
async function withHeldStore(use: (path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/held.kv`;
  (await Deno.openKv(path)).close();
  const lock = new DatabaseSync(path);
  lock.exec("BEGIN EXCLUSIVE");
  try {
    await use(path);
  } finally {
    lock.exec("ROLLBACK");
    lock.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name:
    "a store another program holds locked is waited for a while, said so, then refused with one line",
  // The probe write stays queued behind the lock until it is released; a process that cannot
  // start exits, which ends it, but this test runs in-process.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withHeldStore(async (path) => {
      const started = Date.now();
      await assert.rejects(
        openStore(path, undefined, 600),
        (e: Error) =>
          e instanceof StoreError &&
          e.message ===
            `Cannot write to the store at ${path}: another program held its lock for 0.6 s`,
      );
      const took = Date.now() - started;
      assert.ok(
        took < 3_000,
        `refused after ${took} ms (probe DQ: silent for as long as the lock)`,
      );
    });
  },
});

Deno.test("the admin CLI refused a store another program holds locked exits, not waiting for the lock", async () => {
  await withHeldStore(async (path) => {
    const started = Date.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "admin", "account", "list"],
      env: { KV_PATH: path, NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
      signal: AbortSignal.timeout(40_000),
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.match(stderr, /another program held its lock for 15 s/);
    // Probe DR: it said so at 15 s, then stayed alive until the lock went.
    assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
  });
});

Deno.test("each setting one step past its bound ends start-up with one line and exit code 1; the last good values start", async () => {
  const dir = await Deno.makeTempDir();
  const kv = `${dir}/never/s.kv`;
  const plan = { id: "free", credits: 50, rate_limit_per_sec: 1, max_keys: 1, groups: [] };
  const plansFile = async (name: string, change: Record<string, number>) => {
    await Deno.writeTextFile(
      `${dir}/${name}.json`,
      JSON.stringify({ plans: [{ ...plan, ...change }] }),
    );
    return `${dir}/${name}.json`;
  };
  const cases: [Record<string, string>, RegExp][] = [
    [
      { PLANS_FILE: await plansFile("rate0", { rate_limit_per_sec: 0 }) },
      /'PLANS_FILE'.*rate_limit_per_sec/,
    ],
    [{ PLANS_FILE: await plansFile("keys101", { max_keys: 101 }) }, /'PLANS_FILE'.*max_keys/],
    [{ PLANS_FILE: await plansFile("half", { credits: 10.5 }) }, /'PLANS_FILE'.*credits/],
    [{ ADMIN_TOKEN: "abcdefg".repeat(3) + "abcd" }, /'ADMIN_TOKEN'.*8 different characters/],
    [{ TRUST_PROXY: "11" }, /'TRUST_PROXY'/],
    [{ WATCH_MIN_SECONDS: "0" }, /'WATCH_MIN_SECONDS'/],
    [{ PUBLIC_URL: "https://shelf.example/?x=1" }, /'PUBLIC_URL'.*path or query/],
  ];
  try {
    for (const [env, pattern] of cases) {
      oneLine(await startFails({ KV_PATH: kv, ...env }), pattern);
    }
    assert.equal(await Deno.stat(`${dir}/never`).then(() => true, () => false), false);
    // Every value at its bound together: the server starts and serves.
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      PLANS_FILE: await plansFile("edge", { rate_limit_per_sec: 1, max_keys: 100, credits: 0 }),
      ADMIN_TOKEN: "abcdefgh".repeat(3),
      TRUST_PROXY: "10",
      WATCH_MIN_SECONDS: "1",
      PUBLIC_URL: "https://shelf.example/",
    });
    assert.match(shelf.logs(), /listening on/);
    const r = await fetch(`${shelf.url}/admin/accounts?limit=1`, {
      headers: { authorization: `Bearer ${"abcdefgh".repeat(3)}` },
    });
    assert.equal(r.status, 200, "the 8-character ADMIN_TOKEN opens the admin API");
    await r.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the start-up line names the store without the credentials a KV_PATH holds; TRUST_PROXY on HOST=:: is warned of", async () => {
  const dir = await Deno.makeTempDir();
  try {
    {
      // A path holding "user:password@": everything up to the "@" is left out (core/redact_url.ts).
      await using shelf = await spawnShelf({
        KV_PATH: `${dir}/u:hunter2-secret@s.kv`,
        UPSTREAM: "origin:http://127.0.0.1:9",
      });
      const line = shelf.logs().split("\n").find((l) => l.includes("listening")) ?? "";
      assert.match(line, / · store s\.kv · /, line);
      assert.doesNotMatch(shelf.logs(), /hunter2/);
    }
    {
      // "::" is every address, IPv6 and IPv4, not loopback.
      await using shelf = await spawnShelf({
        KV_PATH: `${dir}/t.kv`,
        UPSTREAM: "origin:http://127.0.0.1:9",
        HOST: "::",
        TRUST_PROXY: "1",
      });
      assert.match(shelf.logs(), /'TRUST_PROXY' is set while listening on ::/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stdout that refuses every write (a log file on a full disk) costs its lines, not the service (probe HH)", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const child = new Deno.Command("sh", {
    args: ["-c", 'exec "$@" > /dev/full', "sh", Deno.execPath(), "run", "--allow-all", MAIN],
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      KV_PATH: `${dir}/shelf.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      NO_COLOR: "1",
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let ended = false;
  child.status.then(() => (ended = true));
  try {
    let health = 0;
    for (let i = 0; i < 300 && health !== 200 && !ended; i++) {
      health = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        async (r) => (await r.body?.cancel(), r.status),
        () => 0,
      );
      if (health !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(health, 200, "serving, with its start-up line refused");
    // The access lines of further requests are refused too; the service goes on.
    const again = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(again.status, 200);
    await again.body?.cancel();
    child.kill("SIGTERM");
    const { code } = await child.status;
    const stderr = new TextDecoder().decode(
      new Uint8Array(await new Response(child.stderr).arrayBuffer()),
    );
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /^shelf: /m);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a start-up error quoting a setting is one line of at most 2 KiB, its control characters escaped (probe HJ)", async () => {
  const r = await startFails({ PORT: `8\x1b]0;owned\x07\x9b2J${"9".repeat(5_000)}` });
  assert.equal(r.code, 1, r.stderr);
  const line = r.stderr.trimEnd();
  assert.ok(!line.includes("\n"), "one line");
  assert.match(line, /^shelf: .*PORT/);
  assert.ok(line.length <= "shelf: ".length + 2_048, `${line.length} characters`);
  // deno-lint-ignore no-control-regex -- the control characters are what is looked for
  assert.doesNotMatch(line, /[\x00-\x1f\x7f-\x9f]/);
  assert.match(line, /8\\u001b\]0;owned\\u0007\\x9b2J9/);
});
