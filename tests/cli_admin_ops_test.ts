/**
 * The operator's tools (INTERFACE.md "Administration" and "Operations", issues 14.6 and 14.10):
 * account lists through the admin API and the CLI, `--help` for every command, one-line errors,
 * and a backup restored into an empty store after which every key works with the same credits.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const TOKEN = "cli-ops-test-admin-token-0123456789";

async function cli(kvPath: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    env: { KV_PATH: kvPath, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

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
    const general = await cli(kvPath, "--help");
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
      const h = await cli(kvPath, ...cmd.split(" "), "--help");
      assert.equal(h.code, 0, `${cmd} --help: ${h.stderr}`);
      assert.match(h.stdout, new RegExp(`^usage: deno task admin ${cmd}`));
      assert.doesNotMatch(h.stdout + h.stderr, /TypeError|at file:/);
    }
    const created = JSON.parse(
      (await cli(kvPath, "account", "create", "--email", "one@example.com")).stdout,
    );
    const listed = await cli(kvPath, "account", "list", "--email", "one@example.com");
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
      const r = await cli(kvPath, ...args);
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
  const backedUp = await cli(a, "backup", file);
  assert.equal(backedUp.code, 0, backedUp.stderr);
  const lines = (await Deno.readTextFile(file)).trim().split("\n");
  assert.match(lines[0], /shelf-backup\/1/);
  assert.ok(!lines.join("\n").includes(key), "the backup holds key digests, never key values");
  const restored = await cli(b, "restore", file);
  assert.equal(restored.code, 0, restored.stderr);
  const again = await cli(b, "restore", file);
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
  };
  try {
    for (const [name, [lines, pattern]] of Object.entries(files)) {
      const file = `${dir}/${name}.jsonl`;
      await Deno.writeTextFile(file, lines.join("\n") + "\n");
      const r = await cli(kvPath, "restore", file);
      assert.equal(r.code, 1, `${name}: ${r.stdout}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, `${name}: ${r.stderr}`);
      assert.match(r.stderr, /^admin: Cannot restore: /, name);
      assert.match(r.stderr, pattern, name);
      assert.doesNotMatch(r.stderr, /is not a function|Cannot read properties|at file:/, name);
    }
    // Nothing was written by any of them: the same store takes a good file.
    const good = `${dir}/good.jsonl`;
    await Deno.writeTextFile(good, [header(3), junk(1), junk(2), junk(3)].join("\n") + "\n");
    const ok = await cli(kvPath, "restore", good);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).entries, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
