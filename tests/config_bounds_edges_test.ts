/**
 * The edges of the settings README "Configuration" documents: the last value a setting takes is
 * taken (PORT=0, an octet of 255, a 63-character host label, a catalog of exactly 1 MiB, a drain
 * of an hour), the first one past it refused naming the setting, the sign-up mode a mail server
 * implies, and an ADMIN_TOKEN too short to use never printed. config_settings_test.ts has the
 * other values; these are the bounds themselves.
 */
import assert from "node:assert/strict";
import { hostFrom, loadConfig, MAX_PLANS_FILE_BYTES } from "../config.ts";
import { spawnShelf, startFails } from "./proof/shelf_process.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

/** The port a started Shelf names in its start-up line. */
function listeningPort(logs: string): number {
  const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(logs);
  assert.ok(m, `no listening line in:\n${logs}`);
  return Number(m[1]);
}

Deno.test("PORT=0 is taken: the server listens on a port the system picks, names it, and answers there", async () => {
  assert.equal(loadConfig(env({ PORT: "0" })).port, 0);
  assert.equal(loadConfig(env({ PORT: "65535" })).port, 65535);
  const dir = await Deno.makeTempDir();
  try {
    // README: "0: a free port the system picks", for tests and side-by-side instances.
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      PORT: "0",
    });
    const port = listeningPort(shelf.logs());
    assert.ok(port > 0, `the line names the port bound, not 0: ${port}`);
    const r = await fetch(`http://127.0.0.1:${port}/v1/`);
    assert.equal(r.status, 200);
    await r.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HOST: an IPv4 octet may be 255 and no more; a host label may be 63 characters and no more", () => {
  for (const ok of ["10.0.0.255", "255.255.255.255", "127.0.0.255"]) {
    assert.equal(hostFrom(ok), ok);
  }
  for (const bad of ["10.0.0.256", "256.0.0.1"]) {
    assert.throws(() => hostFrom(bad), /^RangeError: Cannot start as 'HOST'/, bad);
  }
  const longest = "a".repeat(63) + ".example";
  assert.equal(hostFrom(longest), longest);
  assert.throws(() => hostFrom("a".repeat(64) + ".example"), /'HOST'/);
  assert.throws(() => hostFrom("shelf." + "b".repeat(64)), /'HOST'/);
});

Deno.test("HOST: colons that make no IPv6 address are refused at once, not left to fail at the bind", () => {
  for (const bad of [":::::", "1:2:3", "1::2::3", "[1:2]", "::1::"]) {
    assert.throws(
      () => hostFrom(bad),
      /^RangeError: Cannot start as 'HOST' must be an IPv4 or IPv6 address or a host name/,
      bad,
    );
  }
  for (const ok of ["::1", "fe80::1", "2001:db8::8a2e:370:7334", "::ffff:127.0.0.1"]) {
    assert.equal(hostFrom(ok), ok);
  }
});

Deno.test("PLANS_FILE: a catalog of exactly 1 MiB is read; one byte more is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const plan = { id: "free", credits: 5, rate_limit_per_sec: 1, max_keys: 1, groups: [] };
    const json = JSON.stringify({ plans: [plan] });
    // Trailing spaces are JSON whitespace: the same catalog, padded to the bound.
    await Deno.writeTextFile(
      `${dir}/exact.json`,
      json + " ".repeat(MAX_PLANS_FILE_BYTES - json.length),
    );
    assert.equal((await Deno.stat(`${dir}/exact.json`)).size, MAX_PLANS_FILE_BYTES);
    const cfg = loadConfig(env({ PLANS_FILE: `${dir}/exact.json` }));
    assert.equal(cfg.plans.get("free")?.credits, 5);
    await Deno.writeTextFile(
      `${dir}/over.json`,
      json + " ".repeat(MAX_PLANS_FILE_BYTES - json.length + 1),
    );
    assert.throws(
      () => loadConfig(env({ PLANS_FILE: `${dir}/over.json` })),
      /'PLANS_FILE' cannot be read: .* is larger than 1048576 bytes/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DRAIN_SECONDS: 3600 (an hour, written with decimals or not) is taken; 3600.001 is refused", () => {
  assert.equal(loadConfig(env({ DRAIN_SECONDS: "3600" })).drainSeconds, 3600);
  assert.equal(loadConfig(env({ DRAIN_SECONDS: "3600.000" })).drainSeconds, 3600);
  assert.equal(loadConfig(env({ DRAIN_SECONDS: "0" })).drainSeconds, 0);
  assert.throws(
    () => loadConfig(env({ DRAIN_SECONDS: "3600.001" })),
    /'DRAIN_SECONDS' must be a number of seconds from 0 to 3600: current value is "3600\.001"/,
  );
});

Deno.test("SIGNUP left unset with a mail server is verify, never open: the start-up line says so", async () => {
  // Open sign-up hands out unverified accounts: it must be the operator's explicit choice.
  assert.equal(loadConfig(env({ SMTP_URL: "smtp://mail.example:25" })).signup, "verify");
  assert.equal(
    loadConfig(env({ SMTP_URL: "smtp://mail.example:25", SIGNUP: "open" })).signup,
    "open",
  );
  assert.equal(loadConfig(env({})).signup, "closed");
  const dir = await Deno.makeTempDir();
  try {
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      SMTP_URL: "smtp://127.0.0.1:9",
      PUBLIC_URL: "https://shelf.example",
    });
    const line = shelf.logs().split("\n").find((l) => l.includes("listening")) ?? "";
    assert.match(line, / · sign-up verify · /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an ADMIN_TOKEN too short is refused by its length alone: the token itself is never printed", async () => {
  // 12 and 23 different characters: too short, and nothing else wrong with them.
  for (const token of ["Kq7Zr2Lm9Xw4", "Kq7Zr2Lm9Xw4Pt8Vn3Hj6Bc"]) {
    assert.throws(
      () => loadConfig(env({ ADMIN_TOKEN: token })),
      (e: Error) =>
        e.message ===
          `Cannot start as 'ADMIN_TOKEN' must have at least 24 characters: current value has ${token.length}`,
      token,
    );
  }
  // As the operator meets it: one line on stderr, exit code 1, and the token on neither stream.
  const dir = await Deno.makeTempDir();
  try {
    const token = "Kq7Zr2Lm9Xw4";
    const r = await startFails({ KV_PATH: `${dir}/s.kv`, ADMIN_TOKEN: token });
    assert.equal(r.code, 1, r.stderr + r.stdout);
    const lines = r.stderr.split("\n").filter((l) => l.trim());
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      /^shelf: Cannot start as 'ADMIN_TOKEN' must have at least 24 characters/,
    );
    assert.ok(!r.stderr.includes(token) && !r.stdout.includes(token), "the token was printed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
