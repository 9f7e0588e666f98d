/**
 * Instances on one store compare their plan catalogs (metering/instance_roll.ts): one plan id
 * meaning 20 credits on one instance and 1,000 on another was served without a word (probe HE).
 */
import assert from "node:assert/strict";
import { spawnShelf } from "./proof/shelf_process.ts";
import { removeKvFiles } from "../core/kv_files.ts";
import { catalogDigest, InstanceRoll } from "../metering/instance_roll.ts";
import { builtinPlans, parsePlans } from "../metering/plans.ts";
import { KV } from "../metering/kv_layout.ts";
import { backup, restore } from "../cli/backup.ts";

const plan = (credits: number) =>
  JSON.stringify({
    plans: [{ id: "pro", credits, rate_limit_per_sec: 5, max_keys: 2, groups: ["products"] }],
  });

Deno.test("catalog digest: the same plans in another order agree; one field changed differs", () => {
  const a = parsePlans(JSON.stringify({
    plans: [
      { id: "a", credits: 1, rate_limit_per_sec: 1, max_keys: 1, groups: ["products", "reviews"] },
      { id: "b", credits: 2, rate_limit_per_sec: 1, max_keys: 1, groups: [] },
    ],
  }));
  const reordered = parsePlans(JSON.stringify({
    plans: [
      { groups: [], id: "b", credits: 2, rate_limit_per_sec: 1, max_keys: 1 },
      { id: "a", credits: 1, rate_limit_per_sec: 1, max_keys: 1, groups: ["reviews", "products"] },
    ],
  }));
  assert.equal(catalogDigest(a), catalogDigest(reordered));
  for (
    const changed of [{ credits: 3 }, { rate_limit_per_sec: 2 }, { max_keys: 2 }, {
      groups: ["scrape"],
    }]
  ) {
    const other = parsePlans(JSON.stringify({
      plans: [
        {
          id: "a",
          credits: 1,
          rate_limit_per_sec: 1,
          max_keys: 1,
          groups: ["products", "reviews"],
        },
        { id: "b", credits: 2, rate_limit_per_sec: 1, max_keys: 1, groups: [], ...changed },
      ],
    }));
    assert.notEqual(catalogDigest(a), catalogDigest(other), JSON.stringify(changed));
  }
  assert.notEqual(catalogDigest(a), catalogDigest(builtinPlans()));
});

Deno.test("instance roll: each instance says once that another runs a different catalog; a stopped one leaves", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  const said: Record<string, string[]> = { a: [], b: [], c: [] };
  const log = (who: string) => ({ error: (m: string) => void said[who].push(m) });
  const timing = { everyMs: 60_000, lifeMs: 60_000 };
  const a = new InstanceRoll(kv, parsePlans(plan(20)), log("a"), timing);
  const b = new InstanceRoll(kv, parsePlans(plan(1_000)), log("b"), timing);
  const c = new InstanceRoll(kv, parsePlans(plan(20)), log("c"), timing);
  try {
    await a.start();
    await c.start();
    assert.deepEqual(said, { a: [], b: [], c: [] }, "the same catalog: nothing said");
    await b.start();
    assert.equal(said.b.length, 1, "b sees a's and c's catalog, one line for the one digest");
    assert.match(said.b[0], /another instance on this store .* runs a different plan catalog/);
    assert.match(said.b[0], /same PLANS_FILE/);
    await a.renew();
    await a.renew();
    assert.equal(said.a.length, 1, "a says it at its next renewal, once");
    assert.deepEqual(said.c, []);
    await b.stop();
    const left = await Array.fromAsync(kv.list({ prefix: KV.instances }));
    assert.deepEqual(left.map((e) => e.key[1]).sort(), [a.id, c.id].sort());
  } finally {
    await a.stop();
    await b.stop();
    await c.stop();
    kv.close();
    await removeKvFiles(kvPath);
  }
});

Deno.test("two servers on one store with different PLANS_FILEs: the second says so at start; the same file says nothing", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/shelf.kv`;
  await Deno.writeTextFile(`${dir}/small.json`, plan(20));
  await Deno.writeTextFile(`${dir}/large.json`, plan(1_000));
  const env = (file: string) => ({
    KV_PATH: kvPath,
    UPSTREAM: "origin:http://127.0.0.1:9",
    PLANS_FILE: `${dir}/${file}`,
  });
  const first = await spawnShelf(env("small.json"));
  try {
    const same = await spawnShelf(env("small.json"));
    const other = await spawnShelf(env("large.json"));
    try {
      const told = /different plan catalog/;
      for (let i = 0; i < 100 && !told.test(other.logs()); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(other.logs(), told);
      assert.doesNotMatch(same.logs(), told);
    } finally {
      assert.equal(await other.stop(), 0);
      assert.equal(await same.stop(), 0);
    }
    // The two stopped servers left the roll; the first is still in it.
    const kv = await Deno.openKv(kvPath);
    try {
      assert.equal((await Array.fromAsync(kv.list({ prefix: KV.instances }))).length, 1);
    } finally {
      kv.close();
    }
  } finally {
    await first.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("instance roll: a backup leaves its entries out, and a restore runs beside a server's entry", async () => {
  const dir = await Deno.makeTempDir();
  const source = await Deno.openKv(`${dir}/source.kv`);
  const target = await Deno.openKv(`${dir}/target.kv`);
  const timing = { everyMs: 60_000, lifeMs: 60_000 };
  const rolls = [
    new InstanceRoll(source, builtinPlans(), { error: () => {} }, timing),
    new InstanceRoll(target, builtinPlans(), { error: () => {} }, timing),
  ];
  try {
    for (const roll of rolls) await roll.start();
    await source.set(KV.accountByEmail("roll@example.com"), "acc_roll");
    assert.equal(await backup(source, `${dir}/backup.jsonl`), 1);
    assert.doesNotMatch(await Deno.readTextFile(`${dir}/backup.jsonl`), /"instance"/);
    assert.equal(await restore(target, `${dir}/backup.jsonl`), 1);
    assert.equal((await target.get(KV.accountByEmail("roll@example.com"))).value, "acc_roll");
  } finally {
    for (const roll of rolls) await roll.stop();
    source.close();
    target.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("instance roll: entries no Shelf wrote, or past their life, are passed over, and what is shown of one is checked first (probes HI, HJ)", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(kvPath);
  const said: string[] = [];
  const roll = new InstanceRoll(kv, builtinPlans(), { error: (m) => void said.push(m) }, {
    everyMs: 60_000,
    lifeMs: 60_000,
  });
  try {
    const forged = "x\n[shelf] forged\r\x1b[2J";
    const alive = Date.now() + 60_000;
    await kv.set(KV.instance("ins_a"), {
      catalog: forged,
      started_at: "2026-11-27T00:00:00Z",
      expires_at: alive,
    });
    await kv.set(KV.instance("ins_b"), "not an entry");
    await kv.set(KV.instance("ins_c"), {
      catalog: "a".repeat(64),
      started_at: forged,
      expires_at: alive,
    });
    // Past its life, not yet swept by the store (a killed instance's), or with no life at all.
    await kv.set(KV.instance("ins_d"), { catalog: "b".repeat(64), expires_at: Date.now() - 1 });
    await kv.set(KV.instance("ins_e"), { catalog: "c".repeat(64) });
    await roll.start();
    assert.equal(said.length, 1, said.join("\n"));
    assert.match(
      said[0],
      /^another instance on this store runs a different plan catalog \(aaaaaaaaaaaa /,
    );
    assert.doesNotMatch(said[0], /forged|started/);
  } finally {
    await roll.stop();
    kv.close();
    await removeKvFiles(kvPath);
  }
});
