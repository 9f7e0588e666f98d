/**
 * core/within.ts: a promise with a deadline. The timer never outlives the race (a settled wait
 * left armed keeps a process from exiting until it fires, which Deno 2.9's test sanitizer does not
 * catch: a child process shows it), and the deadline is the one asked for, not a later one. The deadline is read against a
 * plain timer started just after it, 50% later: timers fire in the order of their deadlines.
 */
import assert from "node:assert/strict";
import { within } from "../core/within.ts";

class Late extends Error {}

Deno.test("within answers what the promise settles to first, without calling late()", async () => {
  let lateCalls = 0;
  const late = () => (lateCalls++, new Late("late"));
  assert.equal(await within(Promise.resolve(7), 60_000, late), 7);
  await assert.rejects(within(Promise.reject(new RangeError("no")), 60_000, late), RangeError);
  const soon = new Promise((r) => setTimeout(() => r("soon"), 10));
  assert.equal(await within(soon, 60_000, late), "soon");
  assert.equal(lateCalls, 0);
});

Deno.test("a settled within leaves no timer armed: a process that used it exits at once", async () => {
  // In a child: within() settles at once with a deadline of a minute; an unref'd timer (which
  // keeps nothing alive by itself) fires only if something else holds the process open.
  const code = `
    import { within } from ${JSON.stringify(new URL("../core/within.ts", import.meta.url).href)};
    const v = await within(Promise.resolve("v"), 60_000, () => new Error("late"));
    console.log("settled " + v);
    Deno.unrefTimer(setTimeout(() => { console.log("kept alive by a timer"); Deno.exit(3); }, 3_000));
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", code],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const out = await child.output();
  clearTimeout(guard);
  const stdout = new TextDecoder().decode(out.stdout).trim();
  assert.equal(stdout, "settled v", new TextDecoder().decode(out.stderr));
  assert.equal(out.code, 0);
});

Deno.test("within rejects with late()'s error at its deadline, before a timer set 50% later", async () => {
  const order: string[] = [];
  const never = new Promise<never>(() => {});
  const waited = within(never, 1_000, () => (order.push("late"), new Late("late")));
  const marker = new Promise<void>((r) => setTimeout(() => (order.push("marker"), r()), 1_500));
  await assert.rejects(waited, Late);
  await marker;
  assert.deepEqual(order, ["late", "marker"]);
});
