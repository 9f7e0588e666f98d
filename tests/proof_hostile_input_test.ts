/**
 * Proof 5, hostile input over HTTP: 20,000 generated query strings across every endpoint give
 * only 2xx and 4xx answers, every 422 in the spec's shape naming a parameter of that endpoint,
 * every other error in the spec's error shape, and no charge for any of them: credits used equal
 * the credits the 200s declare (X-Credits-Cost: 1 per data call, 2 for /v1/scrape).
 */
import assert from "node:assert/strict";
import { productShelf } from "./proof/product_shelf.ts";
import { usedCredits } from "./proof/admin_client.ts";
import { hit, json } from "./proof/http.ts";
import { drive } from "./proof/load.ts";
import { hostileQuery } from "./proof/hostile_queries.ts";
import { errorShapeProblem } from "./proof/error_shape.ts";
import { runSeed, seeded } from "./proof/prng.ts";
import { report, scaled } from "./proof/figures.ts";
import { scanForSecrets } from "./proof/secrets.ts";
import { DATA_ENDPOINTS, INDEX_ENDPOINT, USAGE_ENDPOINT } from "../schemas/endpoints.ts";

const QUERIES = scaled(20_000, 20_000);
const ENDPOINTS = [INDEX_ENDPOINT, USAGE_ENDPOINT, ...DATA_ENDPOINTS];

Deno.test(`proof: ${QUERIES} hostile query strings give only 2xx/4xx, 422s in the spec's shape, no charge for a 4xx`, async () => {
  const seed = runSeed();
  const next = seeded(seed);
  await using shelf = await productShelf(10_000_000, 1_000_000);
  const { server, kvPath, key } = shelf;
  const queries = Array.from({ length: QUERIES }, () => hostileQuery(ENDPOINTS, next));
  const started = performance.now();
  const answers = await drive({
    connections: 16,
    untilMs: Date.now() + 300_000,
    maxCalls: QUERIES,
    send: async (n) => ({ q: queries[n], a: await hit(server.url, queries[n].path, key) }),
  });
  const ms = Math.round(performance.now() - started);
  const byStatus = new Map<number, number>();
  const problems: string[] = [];
  let declared = 0;
  for (const { q, a } of answers) {
    byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    const cost = a.headers.get("x-credits-cost");
    if (a.status === 200) declared += Number(cost ?? 0);
    else if (cost !== null && cost !== "0") {
      problems.push(`${a.status} with X-Credits-Cost ${cost}: ${q.path}`);
    }
    if (a.status >= 500 || a.status < 200 || (a.status >= 300 && a.status < 400)) {
      problems.push(`${a.status} ${a.text.slice(0, 200)}: ${q.path.slice(0, 300)}`);
    } else if (a.status >= 400) {
      const body = json(a);
      const shape = errorShapeProblem(a.status, body);
      if (shape) problems.push(`${a.status} ${shape}: ${q.path.slice(0, 300)}`);
      else if (a.status === 422) {
        for (const d of (body as { detail: { loc: string[] }[] }).detail) {
          if (!(d.loc[1] in q.endpoint.params)) {
            problems.push(`422 names '${d.loc[1]}', not a parameter of ${q.endpoint.path}`);
          }
        }
      }
    }
  }
  const used = await usedCredits(server.url, key);
  const scan = await scanForSecrets({
    keys: [key],
    kvPaths: [kvPath],
    logs: [server.logs()],
    bodies: answers.filter(({ a }) => a.status !== 200).map(({ a }) => a.text),
  });
  const figures = {
    seed,
    queries: answers.length,
    statuses: [...byStatus].sort().map(([s, n]) => `${s}×${n}`).join(", "),
    "credits declared by 200s": declared,
    usage: used,
    problems: problems.length,
    ms,
  };
  console.log(figures, problems.slice(0, 15));
  assert.equal(answers.length, QUERIES);
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} answers break the contract`);
  assert.equal(
    used,
    declared,
    "credits used must equal the credits of the 200s (no charge for a 4xx)",
  );
  assert.deepEqual(scan.hits, [], "a key value leaked");
  report("5. hostile input (HTTP)", figures);
});
