/**
 * Settings read exactly as README "Configuration" documents them (probe D, finding 5): an empty
 * value is the same as an unset one, numbers are decimal digits only, on/off settings take only
 * on or off, and values that would run silently wrong are refused with one line naming the
 * setting. Process-level checks (exit code 1, nothing created, no secret printed) are in
 * ops_startup_test.ts.
 */
import assert from "node:assert/strict";
import { DEPLOY_DRAIN_SECONDS, hostFrom, loadConfig, MAX_PLANS_FILE_BYTES } from "../config.ts";
import { redactUrl } from "../core/redact_url.ts";
import { checkUpstream, proxiesSet } from "../upstream/select.ts";
import { parseSmtpUrl } from "../mail/smtp.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

Deno.test("an empty setting is the same as an unset one", () => {
  const empty = loadConfig(env({
    PORT: "",
    HOST: "",
    UPSTREAM: "",
    RESULT_CACHE: "",
    ADMIN_TOKEN: "",
    PLANS_FILE: "",
    SMTP_URL: "",
    SIGNUP: "",
    DRAIN_SECONDS: "",
    PARSE_WORKERS: "",
    HISTORY: "",
    WATCH_MIN_SECONDS: "",
    PUBLIC_URL: "",
  }));
  const unset = loadConfig(env({}));
  assert.equal(empty.port, 8000, "PORT= is the default port, never a random one");
  assert.deepEqual(
    { ...empty, plans: null, corsOrigins: null },
    { ...unset, plans: null, corsOrigins: null },
  );
});

Deno.test("numbers are decimal digits only", () => {
  assert.equal(loadConfig(env({ PORT: "19555" })).port, 19555);
  assert.equal(loadConfig(env({ DRAIN_SECONDS: "0.5" })).drainSeconds, 0.5);
  assert.equal(loadConfig(env({ DRAIN_SECONDS: "30" })).drainSeconds, 30);
  // On Deno Deploy, which kills 5 s after its SIGINT, the drain left unset ends sooner (probe FY).
  assert.equal(loadConfig(env({})).drainSeconds, 10);
  assert.equal(loadConfig(env({ DENO_DEPLOYMENT_ID: "d1" })).drainSeconds, DEPLOY_DRAIN_SECONDS);
  assert.equal(loadConfig(env({ DENO_DEPLOYMENT_ID: "d1", DRAIN_SECONDS: "4" })).drainSeconds, 4);
  for (const v of ["0x50a0", "19e3", " 19555 ", "+80", "80.0", "1_000", "65536"]) {
    assert.throws(() => loadConfig(env({ PORT: v })), /^RangeError: Cannot start as 'PORT'/, v);
  }
  for (const v of [" ", "0x10", "1e1", "-1", ".5", "Infinity", "3601"]) {
    assert.throws(() => loadConfig(env({ DRAIN_SECONDS: v })), /'DRAIN_SECONDS'/, v);
  }
  for (const v of [" ", "0x2", "2.0", "1e1"]) {
    assert.throws(() => loadConfig(env({ PARSE_WORKERS: v })), /'PARSE_WORKERS'/, v);
  }
  for (const v of [" ", "0x10", "1e3"]) {
    assert.throws(() => loadConfig(env({ WATCH_MIN_SECONDS: v })), /'WATCH_MIN_SECONDS'/, v);
  }
});

Deno.test("RESULT_CACHE and HISTORY take on or off, nothing else", () => {
  assert.equal(loadConfig(env({})).resultCache, true);
  assert.equal(loadConfig(env({ RESULT_CACHE: "on" })).resultCache, true);
  assert.equal(loadConfig(env({ RESULT_CACHE: "off" })).resultCache, false);
  for (const v of ["0", "false", "OFF", "no", " off"]) {
    assert.throws(() => loadConfig(env({ RESULT_CACHE: v })), /'RESULT_CACHE' must be on or off/);
    assert.throws(() => loadConfig(env({ HISTORY: v })), /'HISTORY' must be on or off/);
  }
});

Deno.test("HOST: IPv4, IPv6 or a host name", () => {
  assert.equal(hostFrom(undefined), "0.0.0.0");
  for (const ok of ["127.0.0.1", "0.0.0.0", "::", "::1", "[::1]", "localhost", "shelf.internal"]) {
    assert.doesNotThrow(() => hostFrom(ok), ok);
  }
  assert.equal(hostFrom("[::1]"), "::1");
  for (
    const bad of ["999.1.1.1", "1.2.3", "1.2.3.4.5", " ", "a b", "-x", "x_y", "::g", "http://x"]
  ) {
    assert.throws(() => hostFrom(bad), /'HOST'/, bad);
  }
});

Deno.test("ADMIN_TOKEN: no whitespace or control characters, and never echoed", () => {
  for (const v of [" ".repeat(25), "a".repeat(12) + " " + "b".repeat(12), "a".repeat(24) + "\n"]) {
    assert.throws(
      () => loadConfig(env({ ADMIN_TOKEN: v })),
      (e: Error) => /'ADMIN_TOKEN'/.test(e.message) && !e.message.includes("aaaa"),
    );
  }
  const fine = "0123456789abcdefghijklmn"; // 24 characters, all different
  assert.equal(loadConfig(env({ ADMIN_TOKEN: fine })).adminToken, fine);
});

Deno.test("ADMIN_TOKEN: printable ASCII only, and not a repeated word", () => {
  for (
    const v of [
      "€".repeat(24), // clients send it as other bytes: it never matched
      "ab\u0085cdefghijklmnopqrstuvwxyz", // a C1 control character
      "x".repeat(24),
      "adminadminadminadminadmin",
    ]
  ) {
    assert.throws(
      () => loadConfig(env({ ADMIN_TOKEN: v })),
      (e: Error) => /'ADMIN_TOKEN'/.test(e.message) && !e.message.includes(v),
      JSON.stringify(v),
    );
  }
  const hex = "3f9a0c1be27d4485a6f0913c7e2b5d68";
  assert.equal(loadConfig(env({ ADMIN_TOKEN: hex })).adminToken, hex);
});

Deno.test("PLANS_FILE: duplicate plan ids, a device or a file over 1 MiB are refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const plan = (id: string, credits: number) => ({
      id,
      credits,
      rate_limit_per_sec: 1,
      max_keys: 1,
      groups: ["products"],
    });
    await Deno.writeTextFile(
      `${dir}/dup.json`,
      JSON.stringify({ plans: [plan("free", 50), plan("free", 999_999)] }),
    );
    assert.throws(
      () => loadConfig(env({ PLANS_FILE: `${dir}/dup.json` })),
      /'PLANS_FILE'.*"free" appears twice/,
    );
    await Deno.writeTextFile(
      `${dir}/big.json`,
      JSON.stringify({ plans: [plan("free", 50)] }) + " ".repeat(MAX_PLANS_FILE_BYTES),
    );
    assert.throws(
      () => loadConfig(env({ PLANS_FILE: `${dir}/big.json` })),
      /'PLANS_FILE' cannot be read: .* is larger than 1048576 bytes/,
    );
    assert.throws(() => loadConfig(env({ PLANS_FILE: "/dev/zero" })), /not a regular file/);
    assert.throws(() => loadConfig(env({ PLANS_FILE: dir })), /not a regular file/);
    await Deno.writeTextFile(`${dir}/ok.json`, JSON.stringify({ plans: [plan("free", 7)] }));
    assert.equal(loadConfig(env({ PLANS_FILE: `${dir}/ok.json` })).plans.get("free")?.credits, 7);
    // Sign-ups start on "free": a catalog without it is refused unless sign-up is closed (probe
    // DG: every sign-up failed, told its address was not valid).
    await Deno.writeTextFile(`${dir}/nofree.json`, JSON.stringify({ plans: [plan("gold", 9)] }));
    for (const SIGNUP of ["open", "verify"]) {
      assert.throws(
        () =>
          loadConfig(
            env({ PLANS_FILE: `${dir}/nofree.json`, SIGNUP, SMTP_URL: "smtp://mail.example:25" }),
          ),
        /'SIGNUP' is (open|verify), and sign-ups start on the plan "free", which 'PLANS_FILE' does not list/,
      );
    }
    const closed = loadConfig(env({ PLANS_FILE: `${dir}/nofree.json`, SIGNUP: "closed" }));
    assert.deepEqual(closed.plans.ids(), ["gold"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SMTP_URL: smtp(s) with a host; errors name the setting, never the value", () => {
  const cfg = parseSmtpUrl("smtp://us%40er:p%40ss@mail.example.com:2525", undefined);
  assert.deepEqual([cfg.host, cfg.port, cfg.user, cfg.pass], [
    "mail.example.com",
    2525,
    "us@er",
    "p@ss",
  ]);
  for (
    const bad of [
      "smtp:xyz",
      "smtp://user:s3cretPW@exa mple.com:25",
      "smtp://user:s3cretPW@mail.example.com:99999",
      "s3cretPW",
      "https://user:s3cretPW@mail.example.com/",
      "smtp://user:s3cret%E0%A4%A@mail.example.com:25",
      "smtp://user:s3cretPW@mail.example.com:0",
    ]
  ) {
    assert.throws(
      () => loadConfig(env({ SMTP_URL: bad })),
      (e: Error) => /^Cannot start as 'SMTP_URL'/.test(e.message) && !/s3cret/.test(e.message),
      bad,
    );
  }
});

Deno.test("UPSTREAM: origin must be http(s), an archive must exist, proxies parse, cookies are one line", () => {
  assert.deepEqual(checkUpstream("origin:http://127.0.0.1:9", env({})), {
    kind: "origin",
    origin: "http://127.0.0.1:9",
  });
  assert.equal(checkUpstream("archive:demo/sample.warc.gz", env({})).kind, "archive");
  for (
    const bad of ["origin:javascript:alert(1)", "origin:ftp://example.com/", "origin:", "origin:x"]
  ) {
    assert.throws(() => checkUpstream(bad, env({})), /'UPSTREAM' must be origin:/, bad);
  }
  assert.throws(() => checkUpstream("archive:/nonexistent/x.warc", env({})), /'UPSTREAM'.*archive/);
  assert.throws(() => checkUpstream("archive:", env({})), /'UPSTREAM'.*archive/);
  assert.throws(
    () => checkUpstream("live", env({ UPSTREAM_PROXIES: "http://u:s3cretPW@proxy.example:99999" })),
    (e: Error) => /'UPSTREAM_PROXIES' entry 1/.test(e.message) && !/s3cret/.test(e.message),
  );
  assert.doesNotThrow(() =>
    checkUpstream("live", env({ UPSTREAM_PROXIES: "http://a:1, socks5://b:2" }))
  );
  // The environment's HTTPS_PROXY, which the runtime's fetch would use by itself, is read as a
  // proxy setting: checked, and named at start-up (probe DK).
  assert.throws(
    () => checkUpstream("live", env({ HTTPS_PROXY: "http://u:s3cretPW@proxy.example:99999" })),
    (e: Error) => /'HTTPS_PROXY' entry 1/.test(e.message) && !/s3cret/.test(e.message),
  );
  assert.deepEqual(proxiesSet(env({ https_proxy: "http://a:1,http://b:2" })), {
    setting: "https_proxy",
    count: 2,
  });
  assert.deepEqual(
    proxiesSet(env({ UPSTREAM_PROXIES: "socks5://b:2", HTTPS_PROXY: "http://a:1" })),
    { setting: "UPSTREAM_PROXIES", count: 1 },
  );
  assert.equal(proxiesSet(env({})), null);
  // Without a scheme, as /etc/environment often has it: an http proxy, as curl reads it (probe DO).
  assert.doesNotThrow(() => checkUpstream("live", env({ https_proxy: "proxy.corp.example:3128" })));
  for (const bare of ["user:pw@proxy.example:3128", "[::1]:3128", "127.0.0.1:3128/"]) {
    assert.doesNotThrow(() => checkUpstream("live", env({ HTTPS_PROXY: bare })), bare);
  }
  // A scheme typed wrong stays an error, not a proxy at host "http" (probe DR).
  for (
    const typo of [
      "http:/127.0.0.1:3128",
      "socks5:/proxy.example:1080",
      "./proxy",
      "user:12#ss@proxy.corp:3128", // read as host "user", port 12 (probe DW): percent-encode it
      "proxy.corp#x:3128",
    ]
  ) {
    assert.throws(() => checkUpstream("live", env({ HTTPS_PROXY: typo })), /'HTTPS_PROXY'/, typo);
  }
  // DEL (0x7f) too: a control character, which the README rules out of a cookie setting.
  for (const cookie of ["a=b\r\nX: y", "a=b\nc=d", "a=\u0000", "a=b\u007f", "a=\u007fb; c=d"]) {
    assert.throws(
      () => checkUpstream("live", env({ UPSTREAM_COOKIES_DE: cookie })),
      /'UPSTREAM_COOKIES_DE' must be one Cookie header value/,
    );
  }
  assert.doesNotThrow(() => checkUpstream("live", env({ UPSTREAM_COOKIES_DE: "a=b; c=d" })));
});

Deno.test("PUBLIC_URL: a refusal says why, as the value shown leaves out a password or query (probe EZ)", () => {
  for (
    const [value, why] of [
      [
        "https://admin:pw123secret@api.example.com",
        /user name or password\): current value is https:\/\/api\.example\.com\/$/,
      ],
      ["https://api.example.com/v1?x=1", /path or query/],
      ["ftp://api.example.com", /another scheme/],
      ["api example", /not a URL/],
    ] as const
  ) {
    assert.throws(
      () => loadConfig(env({ PUBLIC_URL: value })),
      (e: Error) => why.test(e.message) && !e.message.includes("pw123secret"),
      value,
    );
  }
});

Deno.test("UPSTREAM: settings an archive cannot use, paths that are URLs and sessions of no marketplace are refused, without a password (probe EZ)", () => {
  const all = (vars: Record<string, string>) => ({ ...env(vars), toObject: () => vars });
  assert.throws(
    () => checkUpstream("archive:demo/sample.warc.gz", all({ UPSTREAM_RECORD: "/tmp/x.warc" })),
    /'UPSTREAM_RECORD' records fetched pages, and an archive: upstream fetches none/,
  );
  for (
    const [upstream, vars, setting] of [
      ["archive:https://u:pw123secret@h/x.warc", {}, "UPSTREAM"],
      ["live", { UPSTREAM_RECORD: "http://u:pw123secret@h/x.warc" }, "UPSTREAM_RECORD"],
      // A line break at the end, as a value read from a file has (probe FA).
      ["archive:https://u:pw123secret@h/x.warc\n", {}, "UPSTREAM"],
      ["live", { UPSTREAM_RECORD: "http://u:pw123secret@h/x.warc\n" }, "UPSTREAM_RECORD"],
    ] as const
  ) {
    assert.throws(
      () => checkUpstream(upstream, all(vars)),
      (e: Error) => e.message.includes(`'${setting}'`) && !e.message.includes("pw123secret"),
      upstream,
    );
  }
  assert.throws(
    () => checkUpstream("live", all({ UPSTREAM_COOKIES_GB: "a=b" })),
    /'UPSTREAM_COOKIES_GB' names no marketplace: the codes are US, /,
  );
  assert.doesNotThrow(() => checkUpstream("live", all({ UPSTREAM_COOKIES_UK: "a=b" })));
  // Empty is unset, as for every setting.
  assert.doesNotThrow(() => checkUpstream("live", all({ UPSTREAM_COOKIES_GB: "" })));
});

Deno.test("a URL's credentials are cut at the LAST @ before the host", () => {
  assert.equal(redactUrl("https://u:kv@secret@kv.example/"), "https://kv.example/");
  assert.equal(redactUrl("https://user:pw@kv.example/db"), "https://kv.example/db");
  assert.equal(redactUrl("https://kv.example/"), "https://kv.example/");
  assert.equal(redactUrl("./data/shelf.kv"), "./data/shelf.kv");
  assert.equal(
    redactUrl("https://u:p@ss@ho st/"),
    "https://ho st/",
    "unparsable, cut all the same",
  );
  assert.equal(redactUrl("origin:http://u:pw@fake.test/"), "origin:http://fake.test/");
  assert.equal(redactUrl("user:pw@host"), "host", "no scheme, cut all the same");
});

Deno.test("UPSTREAM_RECORD: a new recording file is the owner's alone (it holds pages fetched with the operator's cookies)", async () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/session.warc`;
    checkUpstream("origin:http://127.0.0.1:9", env({ UPSTREAM_RECORD: path }));
    assert.equal((await Deno.stat(path)).mode! & 0o077, 0, "no group or other access");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("UPSTREAM_RECORD: a FIFO, the store or one of its side files is refused at start-up (probe CP)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fifo = `${dir}/pipe`;
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    const origin = "origin:http://127.0.0.1:9";
    // A device is no recording file either (checked first: a FIFO let through hangs the test).
    assert.throws(
      () => checkUpstream(origin, env({ UPSTREAM_RECORD: "/dev/null" })),
      /'UPSTREAM_RECORD' must name a regular file/,
    );
    // Opened for writing, the FIFO waited for a reader: start-up hung.
    assert.throws(
      () => checkUpstream(origin, env({ UPSTREAM_RECORD: fifo })),
      /'UPSTREAM_RECORD' must name a regular file/,
    );
    const store = `${dir}/shelf.kv`;
    await Deno.symlink(dir, `${dir}/link`);
    await Deno.writeFile(store, new Uint8Array());
    await Deno.link(store, `${dir}/hard.warc`); // the same file under a name of its own
    for (const named of [store, `${store}-wal`, `${dir}/link/shelf.kv-shm`, `${dir}/hard.warc`]) {
      assert.throws(
        () => checkUpstream(origin, env({ UPSTREAM_RECORD: named }), store),
        /'UPSTREAM_RECORD' names the store/,
        named,
      );
    }
    checkUpstream(origin, env({ UPSTREAM_RECORD: `${dir}/session.warc` }), store);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KV_PATH: a file: URL is refused, not made into directories named file: (probe CP)", () => {
  assert.throws(
    () => loadConfig(env({ KV_PATH: "file:///tmp/shelf.kv" })),
    /'KV_PATH' must be a file path, not a file: URL/,
  );
});

Deno.test("UPSTREAM_RECORD_MAX_MB: a whole number of MiB, else a start-up error naming it", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  for (const bad of ["0", "-5", "1.5", "1e3", "abc", "99999999"]) {
    assert.throws(
      () => checkUpstream("origin:http://127.0.0.1:9", env({ UPSTREAM_RECORD_MAX_MB: bad })),
      /'UPSTREAM_RECORD_MAX_MB' must be a whole number of MiB/,
      bad,
    );
  }
  checkUpstream("origin:http://127.0.0.1:9", env({ UPSTREAM_RECORD_MAX_MB: "64" }));
});

Deno.test("each bound is exact: the last good value is taken, one step past it is refused naming the setting", () => {
  // ADMIN_TOKEN: at least 8 different characters (here 24 and 25 long, past the length rule).
  const eight = "abcdefgh".repeat(3);
  assert.equal(loadConfig(env({ ADMIN_TOKEN: eight })).adminToken, eight);
  assert.throws(
    () => loadConfig(env({ ADMIN_TOKEN: "abcdefg".repeat(3) + "abcd" })),
    /'ADMIN_TOKEN' must use at least 8 different characters: current value uses 7/,
  );
  // TRUST_PROXY: a chain of up to 10 proxies.
  assert.equal(loadConfig(env({ TRUST_PROXY: "10" })).trustProxy, 10);
  assert.throws(() => loadConfig(env({ TRUST_PROXY: "11" })), /'TRUST_PROXY'.*"11"/);
  // WATCH_MIN_SECONDS: whole seconds from 1 to 30 days.
  assert.equal(loadConfig(env({ WATCH_MIN_SECONDS: "1" })).watchMinSeconds, 1);
  assert.equal(loadConfig(env({ WATCH_MIN_SECONDS: "2592000" })).watchMinSeconds, 2_592_000);
  for (const v of ["0", "2592001"]) {
    assert.throws(() => loadConfig(env({ WATCH_MIN_SECONDS: v })), /'WATCH_MIN_SECONDS'/, v);
  }
  // PUBLIC_URL: an origin; a bare "/" path is one, a query on it is not.
  assert.equal(
    loadConfig(env({ PUBLIC_URL: "https://shelf.example/" })).publicUrl,
    "https://shelf.example",
  );
  for (const v of ["https://shelf.example/?x=1", "https://shelf.example?x=1"]) {
    assert.throws(
      () => loadConfig(env({ PUBLIC_URL: v })),
      /'PUBLIC_URL' must be an http\(s\) origin \(it has a path or query\)/,
      v,
    );
  }
});

Deno.test("PLANS_FILE: a rate under 1, more than 100 keys or a fractional credit is refused; the bounds are taken", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const plan = { id: "free", credits: 50, rate_limit_per_sec: 1, max_keys: 1, groups: [] };
    const file = async (name: string, change: Record<string, number>) => {
      await Deno.writeTextFile(
        `${dir}/${name}.json`,
        JSON.stringify({ plans: [{ ...plan, ...change }] }),
      );
      return { PLANS_FILE: `${dir}/${name}.json` };
    };
    const good = loadConfig(env(await file("edge", { rate_limit_per_sec: 1, max_keys: 100 })));
    assert.deepEqual(
      [good.plans.get("free")?.rate_limit_per_sec, good.plans.get("free")?.max_keys],
      [1, 100],
    );
    assert.equal(loadConfig(env(await file("zero", { credits: 0 }))).plans.get("free")?.credits, 0);
    for (
      const [name, change, why] of [
        ["rate0", { rate_limit_per_sec: 0 }, /plans\.0\.rate_limit_per_sec: /],
        ["keys101", { max_keys: 101 }, /plans\.0\.max_keys: /],
        ["half", { credits: 10.5 }, /plans\.0\.credits: /],
      ] as const
    ) {
      const bad = env(await file(name, change));
      assert.throws(
        () => loadConfig(bad),
        (e: Error) =>
          /^Cannot start as 'PLANS_FILE' is not a plan catalog/.test(e.message) &&
          why.test(e.message),
        name,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("PARSE_WORKERS: 0 to 256, as the README states: 256 starts, 257 is refused", () => {
  assert.equal(loadConfig(env({ PARSE_WORKERS: "0" })).parseWorkers, 0);
  assert.equal(loadConfig(env({ PARSE_WORKERS: "256" })).parseWorkers, 256);
  assert.throws(
    () => loadConfig(env({ PARSE_WORKERS: "257" })),
    /'PARSE_WORKERS' must be a whole number from 0 to 256: current value is "257"/,
  );
});

Deno.test("a 0/1 flag set to 0 is off and starts, as unset does; 1 is on", () => {
  assert.equal(loadConfig(env({ WEBHOOK_ALLOW_PRIVATE: "0" })).webhookAllowPrivate, false);
  assert.equal(loadConfig(env({})).webhookAllowPrivate, false);
  assert.equal(loadConfig(env({ WEBHOOK_ALLOW_PRIVATE: "1" })).webhookAllowPrivate, true);
  for (const v of ["false", "yes", "OFF", "00"]) {
    assert.throws(
      () => loadConfig(env({ WEBHOOK_ALLOW_PRIVATE: v })),
      /'WEBHOOK_ALLOW_PRIVATE'/,
      v,
    );
  }
});
