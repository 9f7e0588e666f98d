/**
 * The life of a shared fetch (upstream/single_flight.ts): once it has settled, the next caller
 * with the same key starts a fetch of its own rather than getting the old outcome again; and a
 * fetch that was aborted and replaced, settling late, leaves its replacement to be joined.
 */
import assert from "node:assert/strict";
import { SingleFlight } from "../upstream/single_flight.ts";

Deno.test("single flight: a fetch that has ended is not shared with later callers, who fetch anew", async () => {
  const flights = new SingleFlight<string>();
  let fetches = 0;
  const page = (answer: string) => () => {
    fetches++;
    return Promise.resolve(answer);
  };
  assert.equal(await flights.run("k", page("first"), new AbortController().signal), "first");
  assert.equal(await flights.run("k", page("second"), new AbortController().signal), "second");
  assert.equal(fetches, 2);
  // A failed fetch is not handed out again either, nor is one whose caller had no signal.
  await assert.rejects(
    flights.run("e", () => Promise.reject(new Error("upstream 503")), new AbortController().signal),
    /upstream 503/,
  );
  assert.equal(
    await flights.run("e", page("recovered"), new AbortController().signal),
    "recovered",
  );
  assert.equal(await flights.run("n", page("no signal")), "no signal");
  assert.equal(await flights.run("n", page("again")), "again");
  assert.equal(fetches, 5);
});

Deno.test("single flight: an aborted fetch that settles after its replacement started leaves the replacement shared", async () => {
  const flights = new SingleFlight<string>();
  let fetches = 0;
  let failFirst!: () => void;
  const a = new AbortController();
  const first = flights.run("k", () => {
    fetches++;
    // Sees its abort only later (a page still in a worker), then fails.
    return new Promise<string>((_, reject) => failFirst = () => reject(new Error("aborted late")));
  }, a.signal);
  a.abort(new Error("a's deadline"));
  await assert.rejects(first, /a's deadline/);
  let finishSecond!: (v: string) => void;
  const second = flights.run("k", () => {
    fetches++;
    return new Promise<string>((resolve) => finishSecond = resolve);
  }, new AbortController().signal);
  assert.equal(fetches, 2, "the aborted fetch is not joined");
  failFirst();
  await new Promise((r) => setTimeout(r, 0)); // let the first fetch's failure run its course
  const third = flights.run("k", () => {
    fetches++;
    return Promise.resolve("third's own");
  }, new AbortController().signal);
  assert.equal(fetches, 2, "the third caller joins the second fetch, still under way");
  finishSecond("second's page");
  assert.equal(await second, "second's page");
  assert.equal(await third, "second's page");
});
