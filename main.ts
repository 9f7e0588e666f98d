/**
 * Starts Shelf: `deno task start`. Runs unchanged on Deno Deploy (no KV_PATH, no file writes)
 * and under `deno compile` (static imports only).
 */
import { createApp } from "./app.ts";
import { loadConfig, openStore } from "./config.ts";
import { systemClock } from "./metering/clock.ts";
import { dataSourceFor } from "./upstream/select.ts";
import { CachingSource } from "./upstream/result_cache.ts";

const config = loadConfig();
const kv = await openStore(config.kvPath);
const { app } = createApp({
  kv,
  plans: config.plans,
  clock: systemClock,
  dataSource: config.resultCache
    ? new CachingSource(dataSourceFor(config.upstream), kv, systemClock)
    : dataSourceFor(config.upstream),
  adminToken: config.adminToken,
  smtp: config.smtp,
  signup: config.signup,
  trustProxy: config.trustProxy,
  publicUrl: config.publicUrl,
  corsOrigins: config.corsOrigins,
});

Deno.serve({
  port: config.port,
  hostname: config.host,
  onListen: ({ hostname, port }) => console.log(`Shelf listening on http://${hostname}:${port}/`),
}, app.fetch);
