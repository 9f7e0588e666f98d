/**
 * What main.ts says on stderr at start-up: the TRUST_PROXY warning is for an address off this
 * machine's loopback, and all of 127/8 is loopback (Linux routes it all to lo); a start-up error
 * whose message runs over several lines is printed as its first line only.
 */
import assert from "node:assert/strict";
import { spawnShelf, startFails } from "./proof/shelf_process.ts";

Deno.test("TRUST_PROXY on HOST 127.0.0.2 gives no warning: every 127/8 address is loopback", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using shelf = await spawnShelf({
      KV_PATH: `${dir}/s.kv`,
      UPSTREAM: "origin:http://127.0.0.1:9",
      HOST: "127.0.0.2",
      TRUST_PROXY: "1",
    });
    // Stopped before reading: every line written before the exit is then in the logs.
    assert.equal(await shelf.stop(), 0, shelf.logs());
    assert.match(shelf.logs(), /listening on http:\/\/127\.0\.0\.2:\d+\//);
    assert.doesNotMatch(shelf.logs(), /TRUST_PROXY/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a start-up error whose message has a line break prints one `shelf:` line, without what follows the break", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // new URL() drops the line break, so the value is refused for its path; the message quotes
    // the value as given.
    const out = await startFails({
      KV_PATH: `${dir}/s.kv`,
      PUBLIC_URL: "https://shelf.example/\nsecond-line-of-the-value",
    });
    const stderr = out.stderr;
    assert.equal(out.code, 1, stderr);
    const lines = stderr.split("\n").filter((l) => l.trim());
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0], /^shelf: Cannot start as 'PUBLIC_URL' must be an http\(s\) origin /);
    assert.doesNotMatch(stderr, /second-line-of-the-value/);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "no store made for a refused start");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
