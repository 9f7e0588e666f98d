/**
 * A real webhook receiver on loopback for watch tests, the signature check a receiver would run
 * (written with Web Crypto rather than the code under test), a poll for what the service's
 * loops do in their own time, a watch record to put straight into a store, and the watch calls
 * the tests make over HTTP.
 */
import assert from "node:assert/strict";
import { newWatch, type Watch } from "../watches/store.ts";
import { WatchCreated, WatchList, type WatchView } from "../schemas/watches.ts";
interface Received {
  body: string;
  signature: string;
  at: number;
}

/** A webhook receiver on loopback; `answer` decides each status (default 204). */
export function receiver(answer: (n: number) => number = () => 204) {
  const got: Received[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    got.push({
      body: await req.text(),
      signature: req.headers.get("shelf-signature") ?? "",
      at: Date.now(),
    });
    return new Response(null, { status: answer(got.length) });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hooks/shelf?token=abc`,
    got,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** Verifies a Stripe-style signature the way a receiver would, with Web Crypto. */
export async function verify(secret: string, header: string, body: string): Promise<boolean> {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  if (Math.abs(Date.now() / 1000 - Number(m[1])) > 300) return false; // replay window
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${m[1]}.${body}`)),
  );
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("") === m[2];
}

/** Probes every 100 ms until `probe` gives a value; fails naming `what` after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 8_000) {
  const stop = Date.now() + ms;
  while (Date.now() < stop) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** An hourly price watch of B07H57DNVV for `accountId`'s key, due at once. */
export function hourlyWatch(accountId: string, keyId: string): Watch {
  return newWatch({
    account_id: accountId,
    key_id: keyId,
    asin: "B07H57DNVV",
    marketplace: "US",
    zip: null,
    every_seconds: 3600,
    webhook_url: "https://hooks.example.com/x",
    on: ["price"],
  }, Date.now());
}

/**
 * POSTs a price watch of B07H57DNVV to the server at `url` with `key`, with any further `fields`
 * (a `zip`, say); the raw answer.
 */
export function postWatch(
  url: string,
  key: string,
  webhook: string,
  every = 1,
  fields: Record<string, unknown> = {},
) {
  return fetch(`${url}/v1/watches`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({
      asin: "B07H57DNVV",
      every_seconds: every,
      webhook_url: webhook,
      on: ["price"],
      ...fields,
    }),
  });
}

/** As postWatch, answered 201: the watch created. */
export async function createdWatch(
  url: string,
  key: string,
  webhook: string,
  every = 1,
  fields: Record<string, unknown> = {},
) {
  const r = await postWatch(url, key, webhook, every, fields);
  assert.equal(r.status, 201);
  return WatchCreated.parse(await r.json());
}

/** The watches of `key`'s account, as GET /v1/watches lists them (answered 200). */
export async function watchList(url: string, key: string): Promise<WatchView[]> {
  const r = await fetch(`${url}/v1/watches`, { headers: { "x-api-key": key } });
  assert.equal(r.status, 200);
  return WatchList.parse(await r.json()).watches;
}

/** Watch timing for webhook tests: refreshes and deliveries polled every 50 ms, retries at once. */
export const FAST = {
  minSeconds: 1,
  allowPrivate: true,
  run: true,
  scheduler: { pollMs: 50 },
  webhooks: { pollMs: 50, retryMs: 50, maxDelayMs: 100 },
};
