/**
 * Proof 5, parsers: every parser of parsers/mod.ts, fed every corpus page (of every type, not
 * only its own) cut at random points, with random bytes written over random places, and pure
 * random bytes, returns or throws ParseError, never anything else. Bytes go through decodeHtml
 * first, as an upstream body does. The seed is printed, so a failure can be replayed with
 * PROOF_SEED.
 */
import assert from "node:assert/strict";
import { PARSERS } from "../parsers/mod.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { decodeHtml } from "../parsers/decode.ts";
import { fixtureBytes, fixtureMarketplace, fixtureNames } from "./fixture.ts";
import { runSeed, seeded } from "./proof/prng.ts";
import { report, scaled } from "./proof/figures.ts";

const CUTS = scaled(8, 2);
const MUTATIONS = scaled(8, 2);
const NOISE = scaled(50, 10);

const folders = [...Deno.readDirSync(new URL("./fixtures/", import.meta.url))]
  .filter((e) => e.isDirectory).map((e) => e.name).sort();

Deno.test("proof: parsers fed corpus pages cut at random points and random bytes throw nothing but ParseError", async (t) => {
  const seed = runSeed();
  const next = seeded(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pages = await Promise.all(
    folders.flatMap(fixtureNames).map(async (name) => ({ name, bytes: await fixtureBytes(name) })),
  );
  const inputs: { label: string; bytes: Uint8Array; marketplace: string }[] = [];
  for (const p of pages) {
    const marketplace = fixtureMarketplace(p.name);
    for (let i = 0; i < CUTS; i++) {
      const at = int(p.bytes.length);
      inputs.push({ label: `${p.name} cut at ${at}`, bytes: p.bytes.subarray(0, at), marketplace });
    }
    for (let i = 0; i < MUTATIONS; i++) {
      const bytes = p.bytes.slice();
      const runs = 1 + int(20);
      for (let r = 0; r < runs; r++) {
        const at = int(bytes.length);
        for (let k = at; k < Math.min(bytes.length, at + 1 + int(64)); k++) bytes[k] = int(256);
      }
      inputs.push({ label: `${p.name} with ${runs} random runs`, bytes, marketplace });
    }
  }
  for (let i = 0; i < NOISE; i++) {
    const bytes = Uint8Array.from({ length: int(20_000) }, () => int(256));
    inputs.push({ label: `${bytes.length} random bytes`, bytes, marketplace: "US" });
  }

  let parses = 0;
  let returned = 0;
  let parseErrors = 0;
  const others: string[] = [];
  for (const [type, parse] of Object.entries(PARSERS)) {
    await t.step(`${type}`, () => {
      for (const input of inputs) {
        parses++;
        try {
          parse(decodeHtml(input.bytes), { marketplace: input.marketplace });
          returned++;
        } catch (e) {
          if (e instanceof ParseError) parseErrors++;
          else {others.push(
              `${type} on ${input.label}: ${
                e instanceof Error ? e.stack?.split("\n").slice(0, 3).join(" ") : e
              }`,
            );}
        }
      }
    });
  }
  const figures = {
    seed,
    parsers: Object.keys(PARSERS).length,
    "corpus pages": pages.length,
    "inputs per parser": inputs.length,
    parses,
    returned,
    ParseError: parseErrors,
    "other throws": others.length,
  };
  console.log(figures, others.slice(0, 5));
  assert.deepEqual(
    others.slice(0, 5),
    [],
    `${others.length} parses threw something other than ParseError`,
  );
  report("5. hostile input (parsers)", figures);
});
