/**
 * The OpenAPI examples (schemas/examples.json): each endpoint's answer to a demo call, that is,
 * Shelf's real response to a real corpus page, with every list cut to its first two items so
 * the document stays small. `deno run -A demo/build_examples.ts` writes them;
 * tests/openapi_examples_test.ts checks that they are still what Shelf answers.
 */
import { demoCalls } from "./calls.ts";
import type { Demo } from "./server.ts";

export type Examples = Record<string, { source: string; value: unknown }>;

/** Lists cut to two items, at every depth. */
export function trimmed(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, 2).map(trimmed);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimmed(v)]));
  }
  return value;
}

export async function collectExamples(demo: Demo): Promise<Examples> {
  const examples: Examples = {};
  for (const call of demoCalls(demo.origin)) {
    const res = await fetch(call.path, { headers: { "x-api-key": demo.key } });
    const body = await res.json();
    if (res.status !== 200) {
      throw new Error(`${call.path} answered ${res.status}: ${JSON.stringify(body)}`);
    }
    examples[call.endpoint] = {
      source: `GET ${call.path.slice(demo.origin.length)} over demo/sample.warc.gz`,
      value: trimmed(body),
    };
  }
  return examples;
}
