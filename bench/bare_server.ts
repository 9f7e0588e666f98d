/** Baseline for the gateway benchmark: bare Hono on Deno.serve answering the same JSON body. */
import { Hono } from "hono";
import { BENCH_BODY } from "./bench_body.ts";

const app = new Hono();
app.get("/v1/products/offers", (c) => c.json(BENCH_BODY));
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
console.log(
  JSON.stringify({
    url: `http://127.0.0.1:${server.addr.port}/v1/products/offers?asin=B07H57DNVV`,
  }),
);
