/**
 * `deno task demo` (INTERFACE.md, Operations): started as a process with no network beyond
 * loopback, it prints a key and curl commands, and each command answers with real data from the
 * pages in its archive (values read off those corpus pages).
 */
import assert from "node:assert/strict";

async function startDemo(): Promise<{ lines: string[]; stop: () => Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env",
      "--allow-sys",
      new URL("../demo/main.ts", import.meta.url).pathname,
    ],
    env: { PORT: "0", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("Access log lines")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`demo ended before it was ready:\n${text}`);
    text += value;
  }
  return {
    lines: text.split("\n"),
    stop: async () => {
      child.kill("SIGTERM");
      await reader.cancel();
      await child.status;
    },
  };
}

Deno.test("demo: the printed key and curl commands return real product, search, reviews and best-seller data", async () => {
  const demo = await startDemo();
  try {
    const key = demo.lines.map((l) => /KEY=(shelf_live_[0-9a-f]{48})/.exec(l)?.[1]).find(Boolean);
    assert.ok(key, "the demo prints a key");
    const urls = demo.lines.map((l) =>
      /^curl .* "(http:\/\/127\.0\.0\.1:\d+\/v1\/[^"]+)"$/.exec(l)?.[1]
    )
      .filter((u): u is string => !!u);
    assert.ok(urls.length >= 3, `at least three curl commands, got ${urls.length}`);
    const get = async (part: string) => {
      const url = urls.find((u) => u.includes(part));
      assert.ok(url, `a printed call for ${part}`);
      const res = await fetch(url, { headers: { "x-api-key": key } });
      const body = await res.json();
      assert.deepStrictEqual(res.status, 200, JSON.stringify(body));
      return body;
    };
    const product = await get("/v1/products/details");
    assert.deepStrictEqual(product.asin, "B07H57DNVV");
    assert.deepStrictEqual(product.title, "Anthem Of The Peaceful Army");
    assert.deepStrictEqual(product.price.amount, 11.88);
    const search = await get("/v1/products/search");
    assert.deepStrictEqual(search.results[0].asin, "B0FQVG4RWW");
    assert.deepStrictEqual(search.results[0].price.amount, 25.18);
    const reviews = await get("/v1/products/reviews");
    assert.deepStrictEqual(reviews.count, 10);
    assert.deepStrictEqual(reviews.reviews[0].id, "RIY0N097PYR7K");
    const best = await get("/v1/bestsellers");
    assert.deepStrictEqual(best.results[0].asin, "B08N5NQ869");
    assert.deepStrictEqual(best.results[0].rank, 1);
  } finally {
    await demo.stop();
  }
});

Deno.test("demo: it prints exactly the four calls the README lists, not the calls kept for the OpenAPI examples", async () => {
  const demo = await startDemo();
  try {
    const printed = demo.lines.map((l) =>
      /^curl .* "http:\/\/127\.0\.0\.1:\d+(\/v1\/[^"]+)"$/.exec(l)?.[1]
    ).filter((u): u is string => !!u);
    assert.deepStrictEqual(printed, [
      "/v1/products/details?asin=B07H57DNVV&marketplace=US",
      "/v1/products/search?query=portable%20charger&marketplace=US",
      "/v1/products/reviews?asin=B0BBPNPZTC&marketplace=US",
      "/v1/bestsellers?category=hi&marketplace=US",
    ]);
    assert.ok(!demo.lines.some((l) => /\/v1\/products\/offers|\/v1\/sellers\/products/.test(l)));
  } finally {
    await demo.stop();
  }
});

Deno.test("demo: a PORT in use or not a port number is one line on stderr and exit code 1", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    for (
      const [port, pattern] of [
        [
          String((taken.addr as Deno.NetAddr).port),
          /^demo: cannot listen on 127\.0\.0\.1 port \d+: /,
        ],
        [" 0x1F90 ", /^demo: PORT must be a port number/],
      ] as const
    ) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL("../demo/main.ts", import.meta.url).pathname],
        env: { PORT: port, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(30_000),
      }).output();
      const stderr = new TextDecoder().decode(out.stderr).trim();
      assert.equal(out.code, 1, stderr);
      assert.match(stderr, pattern);
      assert.equal(stderr.split("\n").length, 1, stderr);
    }
  } finally {
    taken.close();
  }
});
