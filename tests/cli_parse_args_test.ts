/**
 * `deno task parse`'s arguments as an operator types them: --help, one FILE only, the
 * `--flag=value` forms, and Amazon's "page not found" page named as such whatever --type says.
 * Each case runs the real cli/parse.ts process (as the task does) on corpus pages.
 */
import assert from "node:assert/strict";
import { fixture, fixtureBytes } from "./fixture.ts";
import { parseTask as parse } from "./parse_task.ts";

const USAGE_LINE = "usage: deno task parse [--type T] [--marketplace M] FILE";

/** A temp folder holding `files` (name → bytes), removed after `fn`. */
async function withFiles(
  files: Record<string, Uint8Array>,
  fn: (paths: Record<string, string>) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  try {
    const paths: Record<string, string> = {};
    for (const [name, bytes] of Object.entries(files)) {
      paths[name] = `${dir}/${name}`;
      await Deno.writeFile(paths[name], bytes);
    }
    await fn(paths);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("deno task parse --help (or -h) prints the usage line on stdout and exits 0: asked for, it is no error", async () => {
  for (const flag of ["--help", "-h"]) {
    const out = await parse(flag);
    assert.equal(out.code, 0, `${flag}: ${out.stderr}`);
    assert.equal(out.stdout.trim(), USAGE_LINE, flag);
    assert.equal(out.stderr, "", flag);
  }
});

Deno.test("deno task parse takes one FILE: a second is a usage error (exit 2) naming it, and neither file is printed", async () => {
  await withFiles({
    "first.html": await fixtureBytes("bestsellers/amazon.de__parsy-ce-de.html"),
    "second.html": await fixtureBytes("product/amazon.com__app-B07H57DNVV.html"),
  }, async (p) => {
    // Silently parsing only one of them would print an answer the operator did not ask about.
    const out = await parse(p["first.html"], p["second.html"]);
    assert.equal(out.code, 2, out.stderr);
    assert.equal(out.stdout, "");
    assert.equal(out.stderr.trim(), `unexpected argument ${p["second.html"]}; ${USAGE_LINE}`);
  });
});

Deno.test("deno task parse reads --type=T and --marketplace=M as it reads --type T and --marketplace M", async () => {
  const page = await fixtureBytes("bestsellers/amazon.in__santapan-gp-bestsellers.html");
  await withFiles({ "page.html": page }, async (p) => {
    const file = p["page.html"];
    const spaced = await parse("--type", "categories", "--marketplace", "IN", file);
    assert.equal(spaced.code, 0, spaced.stderr);
    assert.equal(JSON.parse(spaced.stdout).marketplace, "IN");
    for (
      const args of [
        ["--type=categories", "--marketplace=in", file],
        ["--type=categories", "--marketplace", "IN", file],
        ["--type", "categories", "--marketplace=IN", file],
        [file, "--marketplace=in", "--type=categories"],
      ]
    ) {
      const out = await parse(...args);
      assert.equal(out.code, 0, `${args.join(" ")}: ${out.stderr}`);
      assert.equal(out.stdout, spaced.stdout, args.join(" "));
    }
  });
});

Deno.test('deno task parse names Amazon\'s "page not found" page as such (exit 1, one line), with or without --type', async () => {
  // The corpus's dogs-of-Amazon capture with its 404 wording: parsed under a --type, it was read
  // as a product (or search) page of nothing instead of the missing page it is.
  const notFound = (await fixture("blocked/amazon.com__cagan-dogs-of-amazon-503.html"))
    .replaceAll("cs_503", "cs_404");
  await withFiles({ "missing.html": new TextEncoder().encode(notFound) }, async (p) => {
    const file = p["missing.html"];
    for (
      const flags of [[], ["--type", "product"], ["--type", "search"], ["--type=bestsellers"]]
    ) {
      const out = await parse(...flags, file);
      const what = flags.join(" ") || "no --type";
      assert.equal(out.code, 1, `${what}: ${out.stdout}`);
      assert.equal(out.stdout, "", what);
      assert.equal(out.stderr.trim(), `Amazon's "page not found" page: ${file}`, what);
    }
  });
});
