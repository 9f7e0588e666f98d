/**
 * The exact forms of `Authorization: Bearer` that are read (probe HN, AU5-AU7, AU11): the scheme
 * first and alone, then one or more spaces, then the key and nothing but spaces after it. Any
 * other Authorization value is no key, and the `api_key` parameter that follows is read.
 */
import assert from "node:assert/strict";
import { startServer } from "./test_server.ts";

const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

async function status(url: string, headers: Record<string, string>): Promise<number> {
  const r = await fetch(url, { headers });
  await r.body?.cancel();
  return r.status;
}

Deno.test("a Bearer token may follow the scheme after several spaces or a tab", async () => {
  await using s = await startServer();
  const { key } = await s.account("growth");
  for (const gap of [" ", "  ", "   ", "\t", " \t "]) {
    assert.equal(
      await status(s.url + OFFERS, { authorization: `Bearer${gap}${key}` }),
      200,
      `Bearer${JSON.stringify(gap)}<key>`,
    );
  }
});

Deno.test("a Bearer value with anything before the scheme or after the key is no key: 401", async () => {
  await using s = await startServer();
  const { key } = await s.account("growth");
  for (
    const auth of [
      `Bearer ${key} extra`,
      `Bearer ${key} ${key}`,
      `XBearer ${key}`,
      `Basic Bearer ${key}`,
      `Token Bearer ${key}`,
    ]
  ) {
    assert.equal(await status(s.url + OFFERS, { authorization: auth }), 401, auth);
  }
  assert.equal(
    await status(s.url + OFFERS, { authorization: `Bearer ${key}` }),
    200,
    "the same key alone is read",
  );
});

Deno.test("an Authorization header that is no Bearer token does not hide the api_key parameter", async () => {
  await using s = await startServer();
  const { key } = await s.account("growth");
  for (const auth of ["Basic YWJjOmRlZg==", "Digest username=x", `Bearer ${key} extra`]) {
    assert.equal(
      await status(`${s.url}${OFFERS}&api_key=${key}`, { authorization: auth }),
      200,
      auth,
    );
  }
});
