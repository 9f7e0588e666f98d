/**
 * The operator's tools (INTERFACE.md "Administration" and "Operations", issues 14.6 and 14.10):
 * account lists through the admin API and the CLI, `--help` for every command, one-line errors,
 * and a backup restored into an empty store after which every key works with the same credits.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { DatabaseSync } from "node:sqlite";
import { Meter } from "../metering/meter.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";
import type { AccountState } from "../metering/account_state.ts";
import { KV } from "../metering/kv_layout.ts";
import { STORE_LAYOUT } from "../metering/store_layout.ts";
import { adminTask } from "./admin_calls.ts";

const TOKEN = "cli-ops-test-admin-token-0123456789";

Deno.test("GET /admin/accounts pages through every account once; ?email= finds one or none", async () => {
  await using s = await startServer({ adminToken: TOKEN });
  const ids = new Set<string>();
  for (let i = 0; i < 230; i++) ids.add((await s.accounts.create(`list${i}@example.com`)).id);
  const seen: string[] = [];
  let cursor: string | null = "";
  let pages = 0;
  while (cursor !== null) {
    const r: Response = await fetch(
      `${s.url}/admin/accounts${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`,
      {
        headers: { authorization: `Bearer ${TOKEN}` },
      },
    );
    assert.equal(r.status, 200);
    const body: { accounts: { id: string }[]; next_cursor: string | null } = await r.json();
    assert.ok(body.accounts.length <= 100);
    seen.push(...body.accounts.map((a: { id: string }) => a.id));
    cursor = body.next_cursor;
    pages++;
  }
  assert.equal(pages, 3);
  assert.equal(seen.length, 230);
  assert.deepEqual(new Set(seen), ids);
  const one = await (await fetch(`${s.url}/admin/accounts?email=LIST7@example.com`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  })).json();
  assert.deepEqual(one.accounts.map((a: { email: string }) => a.email), ["list7@example.com"]);
  assert.equal(one.next_cursor, null);
  const none = await (await fetch(`${s.url}/admin/accounts?email=nobody@example.com`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  })).json();
  assert.deepEqual(none, { accounts: [], next_cursor: null });
  for (const cursor of ["not-a-cursor", "%00%ff", "A".repeat(5000)]) {
    const bad = await fetch(`${s.url}/admin/accounts?cursor=${cursor}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.ok(
      bad.status === 200 || bad.status === 422,
      `a hostile cursor is answered, not a failure: ${bad.status}`,
    );
    await bad.body?.cancel();
  }
});

Deno.test("admin CLI: --help for every command, account list, and errors as one line with exit code 1", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const general = await adminTask(kvPath, "--help");
    assert.equal(general.code, 0);
    for (
      const cmd of [
        "account create",
        "account list",
        "account show",
        "account set",
        "key create",
        "key list",
        "key revoke",
        "backup",
        "restore",
      ]
    ) {
      assert.ok(general.stdout.includes(cmd), cmd);
      const h = await adminTask(kvPath, ...cmd.split(" "), "--help");
      assert.equal(h.code, 0, `${cmd} --help: ${h.stderr}`);
      assert.match(h.stdout, new RegExp(`^usage: deno task admin ${cmd}`));
      assert.doesNotMatch(h.stdout + h.stderr, /TypeError|at file:/);
    }
    const created = JSON.parse(
      (await adminTask(kvPath, "account", "create", "--email", "one@example.com")).stdout,
    );
    const listed = await adminTask(kvPath, "account", "list", "--email", "one@example.com");
    assert.equal(listed.code, 0);
    assert.deepEqual(JSON.parse(listed.stdout).accounts.map((a: { id: string }) => a.id), [
      created.account.id,
    ]);
    for (
      const args of [
        ["frobnicate"],
        ["account", "show"],
        ["account", "show", "acc_missing"],
        ["account", "create"],
        ["account", "create", "--email", "x@example.com", "--bogus"],
        ["key", "revoke", "key_missing"],
        ["restore", "/nonexistent/backup.jsonl"],
      ]
    ) {
      const r = await adminTask(kvPath, ...args);
      assert.equal(r.code, 1, args.join(" "));
      assert.equal(
        r.stderr.trim().split("\n").length,
        1,
        `${args.join(" ")}: one line, got ${r.stderr}`,
      );
      assert.match(r.stderr, /^admin: /);
      assert.doesNotMatch(r.stderr, /at file:|TypeError/);
    }
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("backup, then restore into an empty store: every key works with the same remaining credits; a non-empty store is refused", async () => {
  const dir = await Deno.makeTempDir();
  const a = `${dir}/a.kv`;
  const b = `${dir}/b.kv`;
  const file = `${dir}/backup.jsonl`;
  let key = "";
  let revokedKey = "";
  let remaining = -1;
  {
    await using s = await startServer({ kvPath: a, signup: "open" });
    const acc = await s.account("starter");
    key = acc.key;
    revokedKey = (await s.accounts.createKey(acc.id)).value;
    await s.accounts.revokeKey(
      (await s.accounts.listKeys(acc.id)).find((k) => k.status === "active" && k.id !== acc.keyId)!
        .id,
    );
    for (let i = 0; i < 3; i++) {
      await (await s.get("/v1/products/offers?asin=B07H57DNVV", key)).body?.cancel();
    }
    remaining = (await (await s.get("/v1/usage", key)).json()).requests_remaining;
  }
  assert.equal(remaining, 4997);
  const backedUp = await adminTask(a, "backup", file);
  assert.equal(backedUp.code, 0, backedUp.stderr);
  const lines = (await Deno.readTextFile(file)).trim().split("\n");
  assert.match(lines[0], /"format":"shelf-backup\/2"/);
  assert.ok(!lines.join("\n").includes(key), "the backup holds key digests, never key values");
  const restored = await adminTask(b, "restore", file);
  assert.equal(restored.code, 0, restored.stderr);
  const again = await adminTask(b, "restore", file);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /not empty/);
  {
    await using s = await startServer({ kvPath: b });
    const usage = await s.get("/v1/usage", key);
    assert.equal(usage.status, 200);
    assert.equal((await usage.json()).requests_remaining, remaining);
    const call = await s.get("/v1/products/offers?asin=B07H57DNVV", key);
    assert.equal(call.status, 200);
    assert.equal(call.headers.get("x-credits-remaining"), String(remaining - 1));
    await call.body?.cancel();
    const revoked = await s.get("/v1/usage", revokedKey);
    assert.equal(revoked.status, 401, "a revoked key stays revoked");
    await revoked.body?.cancel();
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("restore beside another process committing to the same file waits its turns and writes every entry", async () => {
  const dir = await Deno.makeTempDir();
  const a = `${dir}/a.kv`;
  const b = `${dir}/b.kv`;
  const file = `${dir}/backup.jsonl`;
  const keys: string[] = [];
  {
    await using s = await startServer({ kvPath: a });
    for (let i = 0; i < 150; i++) keys.push((await s.account("starter")).key);
  }
  assert.equal((await adminTask(a, "backup", file)).code, 0);
  (await Deno.openKv(b)).close(); // the new, empty store the service also has open
  // Another process writing the same file, a commit every millisecond or so: a commit of the
  // restore whose read snapshot another commit has overtaken is refused at once ("database is
  // locked"), whatever Deno's wait for a busy lock.
  const other = new DatabaseSync(b);
  other.exec("PRAGMA busy_timeout = 5000");
  other.exec("CREATE TABLE IF NOT EXISTS other_writer (n INTEGER)");
  let writing = true;
  const writes = (async () => {
    for (let n = 0; writing; n++) {
      other.exec(`INSERT INTO other_writer VALUES (${n})`);
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  let restored;
  try {
    restored = await adminTask(b, "restore", file);
  } finally {
    writing = false;
    await writes;
    other.close();
  }
  assert.equal(restored.code, 0, restored.stderr);
  {
    await using s = await startServer({ kvPath: b });
    for (const key of keys) {
      const usage = await s.get("/v1/usage", key);
      assert.equal(usage.status, 200, "every account and key was restored");
      await usage.body?.cancel();
    }
  }
  await Deno.remove(dir, { recursive: true });
});

/** An account record as the meter writes one, with `over` changed. */
function record(over: Record<string, unknown>) {
  const t = Date.UTC(2026, 0, 1);
  return {
    id: "acc_3",
    email: "c@example.com",
    plan: "free",
    status: "active",
    created_at: t,
    plan_started_at: t,
    period_start: t,
    used: 0,
    keys: {},
    ...over,
  };
}
const KEY_RECORD = {
  id: "key_1",
  name: "default",
  mode: "live",
  prefix: "shelf_live_abcd",
  last4: "abcd",
  status: "active",
  created_at: Date.UTC(2026, 0, 1),
  revoked_at: null,
  last_used_at: null,
  win_sec: 0,
  win_count: 0,
};

Deno.test("restore checks the whole file first: a bad line is named and nothing is written, so a good file restores after it", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/r.kv`;
  const header = (n: number) => JSON.stringify({ format: "shelf-backup/1", entries: n });
  const entry = (key: unknown, value: unknown) => JSON.stringify({ key, value });
  const junk = (i: number) => entry([{ s: "junk" }, { n: i }], { t: "json", v: i });
  const files: Record<string, [string[], RegExp]> = {
    // Ten good entries (one commit's worth) before the bad one: they must not be written.
    toolarge: [
      [
        header(12),
        ...Array.from({ length: 11 }, (_, i) => junk(i)),
        entry([{ s: "junk" }, { n: 99 }], { t: "json", v: "x".repeat(70_000) }),
      ],
      /line 13: Value too large/,
    ],
    bigkey: [
      [header(1), entry([{ s: "x".repeat(3000) }], { t: "json", v: 1 })],
      /line 2: Key too large/,
    ],
    badkey: [[header(1), entry("x", { t: "json", v: 1 })], /line 2: key is not a list/],
    emptykey: [[header(1), entry([], { t: "json", v: 1 })], /line 2: key is empty/],
    badpart: [[header(2), junk(1), entry([{ q: 1 }], { t: "json", v: 1 })], /line 3: key part 1/],
    nullline: [[header(1), "null"], /line 2: not an entry/],
    badbig: [
      [header(1), entry([{ s: "k" }], { t: "bigint", v: "notanumber" })],
      /line 2: value: a bigint/,
    ],
    badu64: [[header(1), entry([{ s: "k" }], { t: "u64", v: "-1" })], /line 2: value: a u64/],
    badtype: [
      [header(1), entry([{ s: "k" }], { t: "weird", v: 1 })],
      /line 2: value: unknown type/,
    ],
    truncated: [
      [header(2), junk(1), '{"key":[{"s":"junk"},{"n":2}],"value":{"t":"js'],
      /line 3: not JSON/,
    ],
    dup: [[header(2), junk(1), junk(1)], /line 3: the same key as an earlier line/],
    count: [[header(3), junk(1), junk(2)], /holds 2 entries, its header says 3/],
    // A later version's layout is named as such (probe GE: older versions restored newer
    // backups without a word, into stores they could not fully use).
    newer: [
      [JSON.stringify({ format: "shelf-backup/3", entries: 1 }), junk(1)],
      /written by a newer version of Shelf \(layout shelf-backup\/3\); this version restores shelf-backup\/1 and shelf-backup\/2/,
    ],
    other: [[JSON.stringify({ format: "tar", entries: 1 }), junk(1)], /is not a Shelf backup/],
    // An account record whose fields are not what the meter writes (probe CP: `used: "lots"`
    // admitted every call without a limit; a date that is no number made the admin list 503).
    badaccount: [
      [
        header(1),
        entry([{ s: "account" }, { s: "acc_1" }], {
          t: "json",
          v: {
            id: "acc_1",
            email: "a@example.com",
            plan: "free",
            status: "active",
            created_at: 1,
            plan_started_at: 1,
            period_start: 1,
            used: "lots",
            keys: {},
          },
        }),
      ],
      /line 2: account record: used: /,
    ],
    badkeydate: [
      [
        header(1),
        entry([{ s: "account" }, { s: "acc_2" }], {
          t: "json",
          v: {
            id: "acc_2",
            email: "b@example.com",
            plan: "free",
            status: "active",
            created_at: "yesterday",
            plan_started_at: 1,
            period_start: 1,
            used: 0,
            keys: {},
          },
        }),
      ],
      /line 2: account record: created_at: /,
    ],
    // Times no meter wrote (probe GH: a period start of 1e16 made every call of the account,
    // and the admin list, 503; a window second of 1e12 held the key at 429 for good).
    farperiod: [
      [
        header(1),
        entry([{ s: "account" }, { s: "acc_3" }], { t: "json", v: record({ period_start: 1e16 }) }),
      ],
      /line 2: account record: period_start: is a time more than a year ahead/,
    ],
    negative: [
      [
        header(1),
        entry([{ s: "account" }, { s: "acc_3" }], { t: "json", v: record({ created_at: -1e16 }) }),
      ],
      /line 2: account record: created_at: /,
    ],
    farwindow: [
      [
        header(1),
        entry([{ s: "account" }, { s: "acc_3" }], {
          t: "json",
          v: record({ keys: { key_1: { ...KEY_RECORD, win_sec: 1e12 } } }),
        }),
      ],
      /line 2: account record: keys\.key_1\.win_sec: is a second more than a year ahead/,
    ],
    // Counts below zero (probe GP: `used` of -1e6 would restore a million credits more).
    negused: [
      [
        header(1),
        entry([{ s: "account" }, { s: "acc_3" }], { t: "json", v: record({ used: -1e6 }) }),
      ],
      /line 2: account record: used: /,
    ],
    negwindow: [
      [
        header(1),
        entry([{ s: "account" }, { s: "acc_3" }], {
          t: "json",
          v: record({ keys: { key_1: { ...KEY_RECORD, win_count: -5 } } }),
        }),
      ],
      /line 2: account record: keys\.key_1\.win_count: /,
    ],
    // A field named `at` alone, a time before 1970, and values nested past any real entry.
    bareat: [
      [header(1), entry([{ s: "alert" }, { s: "a" }, { s: "b" }], { t: "json", v: { at: 1e16 } })],
      /line 2: at: not a time from 1970 to a year from now/,
    ],
    pastwatch: [
      [header(1), entry([{ s: "watch" }, { s: "w_3" }], { t: "json", v: { created_at: -1e16 } })],
      /line 2: created_at: not a time from 1970 to a year from now/,
    ],
    deep: [
      [
        header(1),
        entry([{ s: "watch" }, { s: "w_4" }], {
          t: "json",
          v: JSON.parse('{"a":'.repeat(12) + '"x"' + "}".repeat(12)),
        }),
      ],
      /line 2: (a\.)+\(nested too deep\)/,
    ],
    // Any entry's times (probe GI: a watch created at 1e16 made the watch list answer 503).
    farwatch: [
      [header(1), entry([{ s: "watch" }, { s: "w_1" }], { t: "json", v: { created_at: 1e16 } })],
      /line 2: created_at: not a time from 1970 to a year from now/,
    ],
    // Not a time at all (probe GL: `{"t":1}` made the watch list answer 503 the same way).
    objwatch: [
      [
        header(1),
        entry([{ s: "watch" }, { s: "w_2" }], { t: "json", v: { created_at: { t: 1 } } }),
      ],
      /line 2: created_at: not a time from 1970 to a year from now/,
    ],
    textexpiry: [
      [
        header(1),
        entry([{ s: "email_token" }, { s: "reset" }, { s: "x" }], {
          t: "json",
          v: { expires_at: "2026-12-20T00:00:00Z" },
        }),
      ],
      /line 2: expires_at: not a time from 1970 to a year from now/,
    ],
    faralert: [
      [
        header(1),
        entry([{ s: "alert" }, { s: "acc_3" }, { s: "a" }], {
          t: "json",
          v: { delivery: { sent_at: "+275760-09-13T00:00:00.000Z" } },
        }),
      ],
      /line 2: delivery\.sent_at: not a time/,
    ],
    // A life no version gives (KV would not take it either), after ten good entries: refused
    // before any is written.
    lifetime: [
      [
        header(12),
        ...Array.from({ length: 11 }, (_, i) => junk(i)),
        entry([{ s: "session" }, { s: "x" }], { t: "json", v: { expires_at: 1e300 } }),
      ],
      /line 13: expires_at: not a time from 1970 to a year from now/,
    ],
  };
  try {
    for (const [name, [lines, pattern]] of Object.entries(files)) {
      const file = `${dir}/${name}.jsonl`;
      await Deno.writeTextFile(file, lines.join("\n") + "\n");
      const r = await adminTask(kvPath, "restore", file);
      assert.equal(r.code, 1, `${name}: ${r.stdout}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, `${name}: ${r.stderr}`);
      assert.match(r.stderr, /^admin: Cannot restore: /, name);
      assert.match(r.stderr, pattern, name);
      assert.doesNotMatch(r.stderr, /is not a function|Cannot read properties|at file:/, name);
    }
    // Nothing was written by any of them: the same store takes a good file.
    const good = `${dir}/good.jsonl`;
    // Times as the code writes them: epoch milliseconds, and ISO text (a price point's).
    const point = entry(
      [{ s: "history" }, { s: "US" }, { s: "B07H57DNVV" }, { n: 1 }, { s: "p1" }],
      {
        t: "json",
        v: { observed_at: "2026-01-01T00:00:00.000Z", at: Date.now(), expires_at: null },
      },
    );
    // An account a process wrote while its clock ran 36 hours ahead (probe GO: the service's
    // clock never goes back, so such times stay in the store after the clock is set right).
    const ahead = Date.now() + 36 * 3600_000;
    const skewed = entry([{ s: "account" }, { s: "acc_3" }], {
      t: "json",
      v: record({
        created_at: ahead,
        plan_started_at: ahead,
        period_start: ahead,
        keys: {
          key_1: {
            ...KEY_RECORD,
            created_at: ahead,
            last_used_at: ahead,
            win_sec: Math.floor(ahead / 1000),
            win_count: 1,
          },
        },
      }),
    });
    // The account's key is found by its id through its index entry, as the service writes one.
    const index = entry([{ s: "key_id" }, { s: "key_1" }], {
      t: "json",
      v: { account_id: "acc_3", hash: "0".repeat(64) },
    });
    // And, as the service writes one, the digest entry by which its value is found.
    const digest = entry([{ s: "key_hash" }, { s: "0".repeat(64) }], {
      t: "json",
      v: { account_id: "acc_3", key_id: "key_1" },
    });
    await Deno.writeTextFile(
      good,
      [header(7), junk(1), junk(2), junk(3), point, skewed, index, digest].join("\n") + "\n",
    );
    const restoredAt = Date.now();
    const ok = await adminTask(kvPath, "restore", good);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).entries, 7);
    // Brought to the restore's time (probe GU: the key's window ahead held it at 429, and the
    // period ahead did not roll, until the clock caught up): the key is admitted at once.
    const kv = await Deno.openKv(kvPath);
    try {
      const plans = builtinPlans();
      const restored = (await kv.get<AccountState>(["account", "acc_3"])).value!;
      const after = Date.now();
      for (const t of [restored.created_at, restored.plan_started_at, restored.period_start]) {
        assert.ok(t >= restoredAt && t <= after, `${t} not the restore's time`);
      }
      assert.equal(restored.used, 0);
      assert.equal(restored.keys.key_1.win_count, 0);
      const meter = new Meter(kv, plans, systemClock);
      const call = await meter.call("acc_3", "key_1", { group: "products", cost: 1, valid: true });
      assert.equal(call.outcome, "admitted");
      assert.equal((await kv.get<AccountState>(["account", "acc_3"])).value!.used, 1);
    } finally {
      kv.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("backup while another process writes without pause: it succeeds, and the file is one state of the store", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/busy.kv`;
  const seed = await Deno.openKv(kvPath);
  // The pair's halves lie at the two ends of the store's order, 2,000 entries apart: a listing
  // of the live store reads them many batches apart, with the writer's commits in between.
  await seed.set(["pair", "a"], 0);
  for (let i = 0; i < 2000; i += 100) {
    const op = seed.atomic();
    for (let j = i; j < i + 100; j++) op.set(["pair", "m", j], "x".repeat(300));
    await op.commit();
  }
  await seed.set(["pair", "z"], 0);
  // Marked, as a store a Shelf server runs on is from its start: unmarked, the CLI's first act
  // was to mark it, a checked commit that the nonstop writer below refused 16 times in a row
  // now and then (CI, once in four runs), before any backup began.
  await seed.set(KV.storeLayout, STORE_LAYOUT);
  seed.close();
  // Each commit moves both halves of the pair together; a file that mixes two moments shows it.
  const writer = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--unstable-kv",
      `const kv = await Deno.openKv(${JSON.stringify(kvPath)});
       for (let i = 1; ; i++) {
         await kv.atomic().set(["pair", "a"], i).set(["pair", "z"], i)
           .set(["pair", "m", i % 2000], "x".repeat(300)).commit();
         if (i === 50) console.log("writing");
       }`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = writer.stdout.pipeThrough(new TextDecoderStream()).getReader();
    assert.match((await reader.read()).value ?? "", /writing/);
    reader.releaseLock();
    for (let n = 0; n < 3; n++) {
      const file = `${dir}/backup-${n}.jsonl`;
      const r = await adminTask(kvPath, "backup", file);
      assert.equal(r.code, 0, `backup ${n}: ${r.stderr}`);
      const pair = new Map<string, unknown>();
      for (const line of (await Deno.readTextFile(file)).trim().split("\n").slice(1)) {
        const { key, value } = JSON.parse(line);
        if (key[0].s === "pair" && key.length === 2) pair.set(key[1].s, value.v);
      }
      assert.ok((pair.get("a") as number) > 50, `backup ${n} saw the writes: ${pair.get("a")}`);
      assert.equal(pair.get("a"), pair.get("z"), `backup ${n} holds one moment of the store`);
    }
  } finally {
    writer.kill();
    await writer.status;
    await writer.stdout.cancel().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("backup never writes over the store it reads, nor over an existing file without --force", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/shelf.kv`;
  try {
    const created = await adminTask(kvPath, "account", "create", "--email", "keep@example.com");
    assert.equal(created.code, 0, created.stderr);
    await Deno.symlink(kvPath, `${dir}/link.kv`);
    for (const target of [kvPath, `${kvPath}-wal`, `${dir}/link.kv`, `${dir}/./shelf.kv`]) {
      const r = await adminTask(kvPath, "backup", target, "--force");
      assert.equal(r.code, 1, target);
      assert.match(r.stderr, /^admin: Cannot back up into .*: it is the store itself/);
    }
    const listed = await adminTask(kvPath, "account", "list");
    assert.equal(listed.code, 0, `the store still opens: ${listed.stderr}`);
    assert.equal(JSON.parse(listed.stdout).accounts.length, 1);

    const file = `${dir}/backup.jsonl`;
    await Deno.writeTextFile(file, "an older backup\n");
    const refused = await adminTask(kvPath, "backup", file);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /exists.*--force/);
    assert.equal(await Deno.readTextFile(file), "an older backup\n");
    const forced = await adminTask(kvPath, "backup", file, "--force");
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(await Deno.readTextFile(file), /shelf-backup\/2/);
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.startsWith(".shelf-")),
      [],
      "the snapshot copy and the temporary file are gone",
    );
    // A FILE.partial planted as a link to the store is not written through.
    const planted = `${dir}/planted.jsonl`;
    await Deno.symlink(kvPath, `${planted}.partial`);
    const through = await adminTask(kvPath, "backup", planted);
    assert.equal(through.code, 0, through.stderr);
    assert.match(await Deno.readTextFile(planted), /shelf-backup\/2/);
    const still = await adminTask(kvPath, "account", "list");
    assert.equal(still.code, 0, `the store still opens: ${still.stderr}`);
    // Into a folder that does not exist: the folder is named (probe EZ: "tmpfile").
    const nowhere = await adminTask(kvPath, "backup", `${dir}/nodir/x.jsonl`);
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /^admin: Cannot back up: cannot write in .*\/nodir: NotFound/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("admin CLI: a refused key mode leaves no account behind; a command named like an Object property is unknown", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const bad = await adminTask(
      kvPath,
      "account",
      "create",
      "--email",
      "half@example.com",
      "--mode",
      "x",
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /invalid_mode/);
    const retry = await adminTask(kvPath, "account", "create", "--email", "half@example.com");
    assert.equal(retry.code, 0, `the address is still free: ${retry.stderr}`);
    const help = await adminTask(kvPath, "constructor", "--help");
    assert.equal(help.code, 0);
    assert.doesNotMatch(help.stdout, /undefined/);
    assert.match(help.stdout, /^usage: deno task admin COMMAND/);
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("a new store, its directory and a backup are readable by their owner only", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/private/shelf.kv`;
  try {
    const created = await adminTask(kvPath, "account", "create", "--email", "mode@example.com");
    assert.equal(created.code, 0, created.stderr);
    const file = `${dir}/backup.jsonl`;
    assert.equal((await adminTask(kvPath, "backup", file)).code, 0);
    const mode = async (p: string) => ((await Deno.stat(p)).mode ?? 0) & 0o777;
    assert.equal((await mode(`${dir}/private`)).toString(8), "700");
    assert.equal((await mode(kvPath)).toString(8), "600");
    assert.equal((await mode(file)).toString(8), "600");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a restore refused before it writes leaves no store where there was none, nor its new folder; an existing store stays (probe HP)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const garbage = `${dir}/garbage.jsonl`;
    await Deno.writeTextFile(garbage, "not a backup\n");
    for (const file of [`${dir}/missing.jsonl`, garbage]) {
      const kvPath = `${dir}/new/shelf.kv`;
      const r = await adminTask(kvPath, "restore", file);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^admin: Cannot restore/);
      assert.deepEqual(
        await Array.fromAsync(Deno.readDir(dir), (e) => e.name).then((n) => n.sort()),
        ["garbage.jsonl"],
      );
    }
    // A folder that was there stays, and so does a store that was there, empty or not.
    const kvPath = `${dir}/shelf.kv`;
    assert.equal((await adminTask(kvPath, "account", "list")).code, 0);
    assert.equal((await adminTask(kvPath, "restore", garbage)).code, 1);
    assert.ok(
      await Deno.stat(kvPath).then(() => true, () => false),
      "the existing empty store stays",
    );
    assert.equal(
      (await adminTask(kvPath, "account", "create", "--email", "kept@example.com")).code,
      0,
    );
    assert.equal((await adminTask(kvPath, "restore", garbage)).code, 1);
    const list = await adminTask(kvPath, "account", "list");
    assert.match(list.stdout, /kept@example\.com/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("admin CLI: control characters an argument carries into an error line are shown escaped, never sent to the terminal", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const hostile = "acc_\x1b]0;owned\x07\x1b[2J";
    for (const args of [["account", "show", hostile], [`bogus${hostile}`]]) {
      const r = await adminTask(`${dir}/s.kv`, ...args);
      assert.equal(r.code, 1);
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(r.stderr, /[\x07\x1b]/, JSON.stringify(r.stderr));
      assert.match(r.stderr, /\\x1b\]0;owned\\x07/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
