/**
 * `deno task proof`: runs the proof tests with the full numbers (PROOF_FULL=1), one
 * file after the other so that no proof's load skews another's figures, then prints one
 * markdown table of their figures and writes it to PROOF.md. Exits 1 when any proof failed.
 */
import { expected, proofTable } from "./proof_table.ts";

const root = new URL("../../", import.meta.url);
const figuresFile = await Deno.makeTempFile({ suffix: ".jsonl" });
// The proof_* files, and the test files of the safety and operability proofs (issues 13, 14).
const PROOF_FILES = [
  "ops_drain_test.ts",
  "upstream_ssrf_test.ts",
  "api_body_limit_test.ts",
  "upstream_body_cap_test.ts",
  "dashboard_auth_test.ts",
];
const files = [...Deno.readDirSync(new URL("tests/", root))]
  .filter((e) => /^proof_.*_test\.ts$/.test(e.name) || PROOF_FILES.includes(e.name)).map((e) =>
    `tests/${e.name}`
  )
  .sort();

const started = performance.now();
const run = await new Deno.Command(Deno.execPath(), {
  args: ["test", "--allow-all", ...files],
  cwd: root.pathname,
  env: { PROOF_FULL: "1", PROOF_FIGURES: figuresFile },
  stdout: "inherit",
  stderr: "inherit",
}).output();
const seconds = Math.round((performance.now() - started) / 1000);

const rows = (await Deno.readTextFile(figuresFile)).split("\n").filter(Boolean).map((l) =>
  JSON.parse(l)
);
await Deno.remove(figuresFile);
const commit = new TextDecoder().decode(
  (await new Deno.Command("git", { args: ["rev-parse", "--short", "HEAD"], cwd: root.pathname })
    .output()).stdout,
).trim();
const table = proofTable(rows, expected);
const text = [
  "# Proof under load, faults and hostile input",
  "",
  `Latest \`deno task proof\`: ${
    new Date().toISOString().slice(0, 19)
  }Z, commit ${commit} (plus working tree), ` +
  `Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, ${seconds} s, deno test exit code ${run.code}.`,
  "What each row proves and how is said at the top of its test file (tests/proof_*_test.ts); " +
  "a row marked FAIL has no figures because its test failed. Seeds replay a run: `PROOF_SEED=… deno task proof`.",
  "Servers spawned by the proofs run `main.ts` with its defaults, so pages are read on " +
  `${navigator.hardwareConcurrency} page workers (PARSE_WORKERS unset).`,
  "",
  table,
  "",
].join("\n");
console.log("\n" + table);
await Deno.writeTextFile(new URL("PROOF.md", root), text);
// Formatted as the rest of the tree is, so that `deno fmt --check` in CI stays clean after a run.
await new Deno.Command(Deno.execPath(), {
  args: ["fmt", "--quiet", new URL("PROOF.md", root).pathname],
}).output();
Deno.exit(run.code === 0 && rows.length >= expected.length ? 0 : 1);
