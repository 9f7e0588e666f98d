/**
 * The ceiling for metering spread over many accounts (issue 15.3): bare Hono that, for each call,
 * writes one account-sized record of the caller's account with a versionstamp-checked commit, the
 * commits of different accounts grouped exactly as the meter groups them (metering/group_commit.ts),
 * one commit in flight per account, and answers the same body and six metering headers. No
 * keys, plans, windows or credits: what is left is the least a meter must store per call when
 * every call is a different account's and its 200s must be durable and exact across processes.
 */
import { Hono } from "hono";
import { BENCH_BODY, referenceSnapshot } from "./bench_body.ts";
import { meterHeaders } from "../routes/meter_headers.ts";
import { GroupCommit } from "../metering/group_commit.ts";
import { setImmediate } from "node:timers";
import { removeKvFilesSync } from "../core/kv_files.ts";

const ACCOUNTS = Number(Deno.env.get("BENCH_ACCOUNTS") ?? 10_000);
const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
const kv = await Deno.openKv(kvPath);
const group = new GroupCommit(kv);

interface Slot {
  id: string;
  versionstamp: string | null;
  calls: number;
  /** The commit in flight for this account: the next one is checked against its result. */
  tail: Promise<void>;
}
const slots = new Map<string, Slot>();
const keys: string[] = [];
for (let i = 0; i < ACCOUNTS; i++) {
  const key = `ref_${crypto.randomUUID()}`;
  keys.push(key);
  // Random ids, as account ids are: each record sits on its own page of the store.
  slots.set(key, {
    id: crypto.randomUUID(),
    versionstamp: null,
    calls: 0,
    tail: Promise.resolve(),
  });
}
// About the size of a spread account's record (650 bytes serialized).
const pad = "x".repeat(600);
for (let i = 0; i < keys.length; i += 100) {
  const op = kv.atomic();
  for (const k of keys.slice(i, i + 100)) op.set(["account", slots.get(k)!.id], { pad, calls: 0 });
  await op.commit();
}
for (const s of slots.values()) s.versionstamp = (await kv.get(["account", s.id])).versionstamp;

function charge(slot: Slot): Promise<void> {
  const run = slot.tail.then(async () => {
    // As the meter does: calls arriving in one turn reach the store together.
    await new Promise((r) => setImmediate(r));
    slot.calls++;
    const check = { key: ["account", slot.id], versionstamp: slot.versionstamp };
    const r = await group.commit(check, (op) => op.set(check.key, { pad, calls: slot.calls }));
    if (!r) throw new Error("the reference's commit conflicted");
    slot.versionstamp = r.versionstamp;
  });
  slot.tail = run.catch(() => {});
  return run;
}

const snapshot = referenceSnapshot();
const app = new Hono();
app.get("/v1/products/offers", async (c) => {
  const slot = slots.get(c.req.header("x-api-key") ?? "");
  if (!slot) return c.json({ error: "unknown key" }, 401);
  await charge(slot);
  return Response.json(BENCH_BODY, { headers: meterHeaders(snapshot, 1, Date.now()) });
});
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
console.log(JSON.stringify({
  url: `http://127.0.0.1:${server.addr.port}/v1/products/offers?asin=B07H57DNVV`,
  keys,
}));
globalThis.addEventListener("unload", () => removeKvFilesSync(kvPath));
for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => Deno.exit(0));
