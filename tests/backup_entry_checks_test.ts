/**
 * Restore's checks of single entries and of the file's framing (cli/backup.ts,
 * cli/backup_entries.ts), each on a file that a real store's backup becomes with one edit: a key
 * index digest with more than 64 hex digits in it, a key digest entry leading to no account or to
 * another account, a webhook schedule entry holding no id; and the refusal naming the line of a
 * bad `{i}` key part, of a header whose count is not a whole number, and of a line longer than
 * any entry can be. Each is refused whole, with nothing written. Real KV files, the backup and
 * restore the admin CLI runs.
 */
import assert from "node:assert/strict";
import { restore } from "../cli/backup.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { digestLineOf, filler, inDir, type Line, lineOf, realBackup } from "./backup_lines.ts";

/**
 * Restores a file of `header` and `lines` into a new store: what restore threw (null: it
 * restored) and how many entries the store then holds.
 */
async function restored(
  dir: string,
  lines: (Line | string)[],
  header: unknown = { format: "shelf-backup/2", entries: lines.length },
) {
  const file = `${dir}/${crypto.randomUUID()}.jsonl`;
  const kvPath = `${dir}/${crypto.randomUUID()}.kv`;
  const text = lines.map((l) => typeof l === "string" ? l : JSON.stringify(l));
  await Deno.writeTextFile(file, [JSON.stringify(header), ...text].join("\n") + "\n");
  const kv = await Deno.openKv(kvPath);
  try {
    const error = await restore(kv, file).then(() => null, (e: Error) => e.message);
    const held = (await Array.fromAsync(kv.list({ prefix: [] }))).length;
    return { error, held, file };
  } finally {
    kv.close();
    await removeKvFiles(kvPath);
    await Deno.remove(file);
  }
}

/** The refusal of an edited file: the file and the line named, why, and nothing written. */
function assertRefused(
  got: { error: string | null; held: number; file: string },
  pattern: RegExp,
  what: string,
): void {
  assert.ok(got.error, `${what}: restored, where it must be refused`);
  assert.ok(got.error.startsWith(`Cannot restore: ${got.file} line `), `${what}: ${got.error}`);
  assert.match(got.error, pattern, what);
  assert.equal(got.held, 0, `${what}: nothing written`);
}

Deno.test("a key index digest holding 64 hex digits and more (65 digits, or a trailing letter) is refused", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "entry-checks@example.com");
    // Without the revoked key's digest entry, its index entry is the only place the digest is.
    const base = structuredClone(real.lines);
    base[digestLineOf(base, real.revokedId)] = filler(1);
    assert.equal((await restored(dir, base)).error, null, "the file before the edit");
    const index = lineOf(base, "key_id", real.revokedId);
    for (const hash of ["a".repeat(65), "a".repeat(64) + "Z", "Z" + "a".repeat(64)]) {
      const lines = structuredClone(base);
      (lines[index].value.v as { hash: string }).hash = hash;
      assertRefused(
        await restored(dir, lines),
        new RegExp(`line ${index + 2}: key index: hash: `),
        `hash ${hash}`,
      );
    }
  }));

Deno.test("a key digest entry whose account id is empty is refused: the digest would lead to no account", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "entry-checks@example.com");
    const orphan: Line = {
      key: [{ s: "key_hash" }, { s: "c".repeat(64) }],
      value: { t: "json", v: { account_id: "", key_id: "key_nobody" } },
    };
    const lines = [...real.lines, orphan];
    assertRefused(
      await restored(dir, lines),
      new RegExp(`line ${lines.length + 1}: key digest index: account_id: `),
      "empty account_id",
    );
  }));

Deno.test("a revoked key's digest entry naming another account is refused, though no account record holds the key any more", () =>
  inDir(async (dir) => {
    const real = await realBackup(dir, "entry-checks@example.com");
    const lines = structuredClone(real.lines);
    const digest = digestLineOf(lines, real.revokedId);
    // Only the key's index entry still says whose it is: revoked keys moved out of the record.
    (lines[digest].value.v as { account_id: string }).account_id = "acc_other";
    assertRefused(
      await restored(dir, lines),
      new RegExp(
        `line ${
          digest + 2
        }: key digest entry: names account acc_other, but key ${real.revokedId} is account ${real.accountId}'s`,
      ),
      "digest entry of another account",
    );
  }));

Deno.test("a webhook schedule entry holding no event id is refused: it stopped every account's webhook deliveries", () =>
  inDir(async (dir) => {
    const due: Line = {
      key: [{ s: "webhook_due" }, { n: 0 }, { s: "evt_junk" }],
      value: { t: "json", v: { x: 1 } },
    };
    assertRefused(await restored(dir, [due]), /line 2: schedule entry: /, "webhook_due {x:1}");
    const empty = structuredClone(due);
    empty.value.v = "";
    assertRefused(await restored(dir, [empty]), /line 2: schedule entry: /, 'webhook_due ""');
    // What the scheduler writes, an event id, restores.
    const real = structuredClone(due);
    real.value.v = "evt_junk";
    assert.equal((await restored(dir, [real])).error, null, "webhook_due holding its event id");
  }));

Deno.test("a bigint key part that is not an integer is refused naming its line and part", () =>
  inDir(async (dir) => {
    for (const v of ["1x", "0x10", "1.5", ""]) {
      const bad: Line = { key: [{ s: "junk" }, { i: v }], value: { t: "json", v: 1 } };
      assertRefused(
        await restored(dir, [filler(1), bad]),
        /line 3: key part 2: not a valid \{i\} part$/,
        `{i: ${JSON.stringify(v)}}`,
      );
    }
  }));

Deno.test("a header whose entries is not a whole count is refused as line 1", () =>
  inDir(async (dir) => {
    for (const entries of [1.5, -1, "1", null]) {
      const got = await restored(dir, [filler(1)], { format: "shelf-backup/2", entries });
      assert.equal(
        got.error,
        `Cannot restore: ${got.file} line 1: the header's entries is not a count`,
        `entries ${JSON.stringify(entries)}`,
      );
      assert.equal(got.held, 0);
    }
  }));

Deno.test("a line longer than any entry can be (16 MiB without a line end) is refused as such, naming it", () =>
  inDir(async (dir) => {
    // Read whole, it would be held in memory as one string before being refused as too large.
    const long = `{"key":[{"s":"junk"},{"n":2}],"value":{"t":"json","v":"${
      "x".repeat(17 << 20)
    }"}}`;
    const file = `${dir}/long.jsonl`;
    await Deno.writeTextFile(
      file,
      `${JSON.stringify({ format: "shelf-backup/2", entries: 2 })}\n${
        JSON.stringify(filler(1))
      }\n${long}`,
    );
    const kvPath = `${dir}/long.kv`;
    const kv = await Deno.openKv(kvPath);
    try {
      await assert.rejects(
        restore(kv, file),
        (e: Error) => {
          assert.equal(e.message, `Cannot restore: ${file} line 3: longer than any entry can be`);
          return true;
        },
      );
      assert.equal((await Array.fromAsync(kv.list({ prefix: [] }))).length, 0);
    } finally {
      kv.close();
      await removeKvFiles(kvPath);
    }
  }));
