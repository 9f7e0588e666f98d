/**
 * Start-up as operators meet it (issues 13.14, 13.15, 14.5): one line naming version, address,
 * store, upstream mode, sign-up mode and page workers; a setting or store that cannot be used is
 * one line on stderr and exit code 1, never a stack trace or a served 503.
 */
import assert from "node:assert/strict";
import { freePort, spawnShelf } from "./proof/shelf_process.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function startFails(
  env: Record<string, string>,
): Promise<{ code: number; stderr: string; stdout: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN],
    env: {
      PORT: String(freePort()),
      HOST: "127.0.0.1",
      UPSTREAM: "origin:http://127.0.0.1:9",
      NO_COLOR: "1",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  return {
    code: out.code,
    stderr: new TextDecoder().decode(out.stderr),
    stdout: new TextDecoder().decode(out.stdout),
  };
}

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
      ADMIN_TOKEN: "a".repeat(24),
    });
    const line = shelf.logs().split("\n").find((l) => l.includes("listening")) ?? "";
    assert.match(line, /^Shelf \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+\//);
    assert.ok(line.includes(`store ${dir}/s.kv`), line);
    assert.match(line, /upstream origin/);
    assert.match(line, /sign-up closed/, "closed is the default without SMTP_URL");
    assert.match(line, /parse workers \d+/);
    assert.doesNotMatch(line, /a{24}/, "no secret in the start-up line");
  }
  await Deno.remove(dir, { recursive: true });
});
