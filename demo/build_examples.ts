/** Writes schemas/examples.json from the demo's answers: `deno run -A demo/build_examples.ts`. */
import { collectExamples } from "./examples.ts";
import { startDemo } from "./server.ts";

await using demo = await startDemo({ port: 0 });
const examples = await collectExamples(demo);
const out = new URL("../schemas/examples.json", import.meta.url);
await Deno.writeTextFile(out, JSON.stringify(examples, null, 2) + "\n");
console.log(`wrote ${Object.keys(examples).length} examples to ${out.pathname}`);
