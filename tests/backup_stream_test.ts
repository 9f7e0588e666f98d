/**
 * Backup and restore stream (cli/backup.ts): restore reads the file a chunk of a MiB at a time,
 * twice, so a line, or a character, cut between two chunks must come out whole; a last line
 * without a line end is a line; and the checks that used to see the whole file at once (no key
 * twice, the header's count) still refuse before anything is written, though the scratch store
 * keeps no entry past its batch. Backup of a store without a snapshot keeps a digest of each
 * listing instead of the entries, and still writes only a listing that agrees with the one before.
 * Real KV files, the functions the CLI runs.
 */
import assert from "node:assert/strict";
import { backup, restore } from "../cli/backup.ts";
import { removeKvFiles } from "../core/kv_files.ts";

const MiB = 1 << 20;
const header = (n: number) => JSON.stringify({ format: "shelf-backup/1", entries: n });
const line = (key: unknown, value: unknown) => JSON.stringify({ key, value });
const junk = (i: number) => line([{ s: "junk" }, { n: i }], { t: "json", v: i });

async function everything(kv: Deno.Kv) {
  const out: { key: Deno.KvKey; value: unknown }[] = [];
  for await (const e of kv.list({ prefix: [] })) out.push({ key: e.key, value: e.value });
  return out;
}

async function withStores(
  work: (dir: string, stores: Deno.Kv[]) => Promise<void>,
  count = 2,
) {
  const dir = await Deno.makeTempDir();
  const stores: Deno.Kv[] = [];
  try {
    for (let i = 0; i < count; i++) stores.push(await Deno.openKv(`${dir}/s${i}.kv`));
    await work(dir, stores);
  } finally {
    for (const kv of stores) kv.close();
    for (let i = 0; i < count; i++) await removeKvFiles(`${dir}/s${i}.kv`);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a backup of several MiB, long values among many small ones, restores entry for entry though lines and characters are cut between read chunks", async () => {
  await withStores(async (dir, [source, target]) => {
    let op = source.atomic();
    for (let i = 0; i < 3000; i++) {
      op.set(
        ["history", "US", `B0${String(i >> 6).padStart(8, "0")}`, 1_700_000_000_000 + i, "x"],
        {
          observed_at: new Date(1_700_000_000_000 + i).toISOString(),
          price: { amount: 19.99 + i, currency: "EUR", symbol: "€" },
          in_stock: i % 3 !== 0,
          rating: 4.5,
          reviews_count: i,
          bestsellers_rank: [{ category: "Küche & Haushalt", rank: i }],
        },
      );
      if (i % 100 === 99) {
        assert.ok((await op.commit()).ok);
        op = source.atomic();
      }
    }
    // Long values, three UTF-8 bytes a character: a chunk ends inside one of them somewhere.
    for (let i = 0; i < 40; i++) {
      const pad = "a".repeat(i * 37);
      await source.set(["history", "US", `B0${String(i).padStart(8, "0")}`, 0, "long"], {
        note: pad + "€".repeat(30_000 - pad.length - 20),
      });
      await source.set(["blob", i], new Uint8Array(45_000).map((_, j) => (i + j) & 255));
    }
    await source.set(["typed", 1n, true, new Uint8Array([0, 255])], 12345678901234567890n);
    await source.set(["typed", "date"], new Date(1_700_000_000_123));
    await source.set(["typed", "u64"], new Deno.KvU64(2n ** 64n - 1n));
    await source.set(["session", "s"], { expires_at: Date.now() + 3_600_000 });
    const file = `${dir}/backup.jsonl`;
    const written = await backup(source, file);
    const expected = await everything(source);
    assert.equal(written, expected.length);

    const bytes = await Deno.readFile(file);
    assert.ok(bytes.length > 6 * MiB, `several chunks: ${bytes.length}`);
    const text = new TextDecoder().decode(bytes);
    const lines = text.split("\n");
    assert.equal(lines.pop(), "", "every line ends with a line end");
    assert.equal(JSON.parse(lines[0]).entries, expected.length);
    assert.equal(lines.length, expected.length + 1);
    for (const l of lines.slice(1)) {
      assert.equal(l, JSON.stringify(JSON.parse(l)), "each entry as JSON.stringify writes it");
      assert.deepEqual(Object.keys(JSON.parse(l)), ["key", "value"]);
    }
    const cuts = Array.from({ length: Math.floor(bytes.length / MiB) }, (_, k) => (k + 1) * MiB);
    assert.ok(cuts.some((at) => bytes[at - 1] !== 10), "a chunk ends inside a line");
    assert.ok(
      cuts.some((at) => (bytes[at] & 0xc0) === 0x80),
      "a chunk ends inside a character",
    );

    assert.equal(await restore(target, file), expected.length);
    assert.deepEqual(await everything(target), expected);
  });
});

Deno.test("a last line without a line end is restored", async () => {
  await withStores(async (dir, [kv]) => {
    const file = `${dir}/nolf.jsonl`;
    await Deno.writeTextFile(
      file,
      [header(13), ...Array.from({ length: 12 }, (_, i) => junk(i)), junk(12)].join("\n"),
    );
    assert.equal(await restore(kv, file), 13);
    const got = await everything(kv);
    assert.equal(got.length, 13);
    assert.deepEqual(got.at(-1), { key: ["junk", 12], value: 12 });
  }, 1);
});

Deno.test("a key twice is refused with nothing written, though the first was checked batches before", async () => {
  await withStores(async (dir, [kv]) => {
    const files: Record<string, [string[], RegExp]> = {
      // Same key, written out in the same form, 3,000 lines apart.
      far: [
        [header(3002), ...Array.from({ length: 3001 }, (_, i) => junk(i)), junk(3)],
        /line 3003: the same key as an earlier line/,
      ],
      // Same bigint key part written two ways.
      spelled: [
        [
          header(25),
          line([{ s: "big" }, { i: "7" }], { t: "json", v: 1 }),
          ...Array.from({ length: 23 }, (_, i) => junk(i)),
          line([{ s: "big" }, { i: "007" }], { t: "json", v: 2 }),
        ],
        /line 26: the same key as an earlier line/,
      ],
      // Before a value KV refuses in the same batch: the earlier line is the one named.
      first: [
        [
          header(23),
          ...Array.from({ length: 21 }, (_, i) => junk(i)),
          junk(20),
          line([{ s: "junk" }, { n: 99 }], { t: "json", v: "x".repeat(70_000) }),
        ],
        /line 23: the same key as an earlier line/,
      ],
    };
    for (const [name, [lines, pattern]] of Object.entries(files)) {
      const file = `${dir}/${name}.jsonl`;
      await Deno.writeTextFile(file, lines.join("\n") + "\n");
      await assert.rejects(restore(kv, file), (e: Error) => {
        assert.match(e.message, /^Cannot restore: /, name);
        assert.match(e.message, pattern, name);
        return true;
      });
      assert.deepEqual(await everything(kv), [], `${name}: nothing written`);
    }
    // -0 and 0 are two keys to KV: not a key twice.
    const zeros = `${dir}/zeros.jsonl`;
    await Deno.writeTextFile(
      zeros,
      [
        header(2),
        '{"key":[{"n":0}],"value":{"t":"json","v":"zero"}}',
        '{"key":[{"n":-0}],"value":{"t":"json","v":"minus"}}',
      ]
        .join("\n") + "\n",
    );
    assert.equal(await restore(kv, zeros), 2);
  }, 1);
});

Deno.test("a header whose count is not the file's is refused with nothing written, more entries or fewer", async () => {
  await withStores(async (dir, [kv]) => {
    for (const [said, has] of [[30, 31], [30, 29], [0, 1], [5, 0]]) {
      const file = `${dir}/count-${said}-${has}.jsonl`;
      await Deno.writeTextFile(
        file,
        [header(said), ...Array.from({ length: has }, (_, i) => junk(i))].join("\n") + "\n",
      );
      await assert.rejects(
        restore(kv, file),
        new RegExp(`^Error: Cannot restore: .* holds ${has} entries, its header says ${said}$`),
      );
      assert.deepEqual(await everything(kv), [], `${said}/${has}: nothing written`);
    }
  }, 1);
});

/**
 * A store listed without a snapshot (no KV_PATH file: Deno Deploy, KV Connect), its listings made
 * to change it: `change(n)` runs in the middle of listing n (from 1), after item 3 was listed.
 */
function changing(kv: Deno.Kv, change: (n: number) => Promise<unknown> | undefined) {
  let listings = 0;
  const store = {
    async *list(selector: Deno.KvListSelector, options?: Deno.KvListOptions) {
      const n = ++listings;
      let i = 0;
      for await (const e of kv.list(selector, options)) {
        if (i++ === 600) await change(n);
        yield e;
      }
    },
  };
  return { store: store as unknown as Deno.Kv, listings: () => listings };
}

async function fileOf(file: string) {
  const [head, ...lines] = (await Deno.readTextFile(file)).trim().split("\n");
  const items = new Map(lines.map((l) => JSON.parse(l)).map((e) => [e.key[1].n, e.value.v]));
  return { entries: JSON.parse(head).entries, lines: lines.length, items };
}

Deno.test("a store listed without a snapshot is listed until two listings agree, and the file is the one that agreed; one that keeps changing is refused", async () => {
  await withStores(async (dir, [kv]) => {
    for (let i = 0; i < 1200; i += 100) {
      const op = kv.atomic();
      for (let j = i; j < i + 100; j++) op.set(["item", j], j);
      await op.commit();
    }
    // A value changed during the count: the written listing differs, the next agrees with it.
    const moved = changing(kv, (n) => n === 1 ? kv.set(["item", 3], "moved") : undefined);
    assert.equal(await backup(moved.store, `${dir}/moved.jsonl`), 1200);
    assert.equal(moved.listings(), 3);
    const a = await fileOf(`${dir}/moved.jsonl`);
    assert.deepEqual([a.entries, a.lines, a.items.get(3)], [1200, 1200, "moved"]);

    // An entry gone, before it was reached, during the written listing: that file, written under
    // the count before, is not kept; the next, which agrees with it, has its count in the header.
    const gone = changing(kv, (n) => n === 2 ? kv.delete(["item", 1100]) : undefined);
    assert.equal(await backup(gone.store, `${dir}/gone.jsonl`), 1199);
    assert.equal(gone.listings(), 3);
    const b = await fileOf(`${dir}/gone.jsonl`);
    assert.deepEqual([b.entries, b.lines, b.items.has(1100)], [1199, 1199, false]);

    // Changed in every listing: refused after five comparisons, and nothing left behind.
    const busy = changing(kv, (n) => kv.set(["item", 3], n));
    await assert.rejects(backup(busy.store, `${dir}/busy.jsonl`), /kept changing/);
    assert.equal(busy.listings(), 6);
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => !n.startsWith("s0.kv")).sort(),
      ["gone.jsonl", "moved.jsonl"],
    );
  }, 1);
});

Deno.test("restore refuses a FIFO at once, with nothing written (opening one waits for a writer)", async () => {
  const dir = await Deno.makeTempDir();
  const fifo = `${dir}/backup.jsonl`;
  const kv = await Deno.openKv(":memory:");
  try {
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(made.success, "mkfifo");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      restore(kv, fifo).then(() => "restored", (e: Error) => e.message),
      new Promise<string>((r) => timer = setTimeout(() => r("still waiting after 5 s"), 5_000)),
    ]);
    clearTimeout(timer);
    assert.match(outcome, /is not a regular file/);
    for await (const _ of kv.list({ prefix: [] })) assert.fail("nothing is written");
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a header with a negative count, and a key part with two fields, are refused with their own message and nothing written", async () => {
  await withStores(async (dir, [kv]) => {
    const negative = `${dir}/negative.jsonl`;
    await Deno.writeTextFile(negative, [header(-1), junk(0)].join("\n") + "\n");
    await assert.rejects(restore(kv, negative), (e: Error) => {
      assert.match(e.message, /^Cannot restore: /);
      assert.match(e.message, /line 1: the header's entries is not a count/);
      return true;
    });
    assert.deepEqual(await everything(kv), [], "negative count: nothing written");

    const twoFields = `${dir}/two-fields.jsonl`;
    await Deno.writeTextFile(
      twoFields,
      [header(2), junk(0), line([{ s: "a", n: 1 }], { t: "json", v: 1 })].join("\n") + "\n",
    );
    await assert.rejects(restore(kv, twoFields), (e: Error) => {
      assert.match(e.message, /^Cannot restore: /);
      assert.match(e.message, /line 3: key part 1: not one of \{s\}, \{n\}, \{i\}, \{t\}, \{b\}/);
      return true;
    });
    assert.deepEqual(await everything(kv), [], "two-field key part: nothing written");
  }, 1);
});
