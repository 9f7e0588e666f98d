import assert from "node:assert/strict";
import { fixtureBytes } from "./fixture.ts";

const root = new URL("../", import.meta.url);

async function runParse(name: string, ...flags: string[]) {
  const file = await Deno.makeTempFile({ suffix: ".html" });
  try {
    await Deno.writeFile(file, await fixtureBytes(name));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "parse", ...flags, file],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("deno task parse prints the detected page's JSON and exits 0", async () => {
  const { code, stdout } = await runParse("bestsellers/amazon.de__parsy-ce-de.html");
  assert.equal(code, 0);
  const page = JSON.parse(stdout);
  assert.equal(page.category, "Bestseller in Elektronik & Foto");
  assert.equal(page.results.length, 30);
  // Marketplace taken from the page's canonical link: prices read as euros.
  assert.equal(page.results[0].price.currency, "EUR");
});

Deno.test("deno task parse honours --type and --marketplace", async () => {
  const { code, stdout } = await runParse(
    "bestsellers/amazon.in__santapan-gp-bestsellers.html",
    "--type",
    "categories",
    "--marketplace",
    "IN",
  );
  assert.equal(code, 0);
  const page = JSON.parse(stdout);
  assert.equal(page.categories[0].url, "https://www.amazon.in/gp/bestsellers/boost");
});

Deno.test("deno task parse exits 1 with one line on a blocked page", async () => {
  const { code, stdout, stderr } = await runParse("blocked/amazon.com__app-robot-check.html");
  assert.equal(code, 1);
  assert.equal(stdout, "");
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0], /blocked page \(robot_check\)/);
});

Deno.test("deno task parse exits 1 with one line when the page is not of the given type", async () => {
  const { code, stderr } = await runParse(
    "bestsellers/amazon.de__parsy-ce-de.html",
    "--type",
    "promotion",
  );
  assert.equal(code, 1);
  assert.equal(stderr.trim().split("\n").length, 1, stderr);
});
