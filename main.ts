/**
 * Starts Shelf: `deno task start`. Runs unchanged on Deno Deploy (no KV_PATH, no file writes)
 * and under `deno compile` (static imports only).
 *
 * A setting or store that cannot be used ends start-up with one line on stderr and exit code 1:
 * every setting is checked before the store is opened, and the server binds its address before
 * anything starts working (watch refreshes, webhooks, alert mail), so an instance that cannot
 * listen (PORT taken, HOST not on this machine) exits 1 instead of working unreachable. Where
 * the store is a local file not yet made, the address is tried once first, so that such a start
 * creates none; the store is still opened before the real bind, so that a store that cannot be
 * used is never a served 503.
 * SIGTERM, SIGINT or SIGHUP drains: no new connections, calls in flight get DRAIN_SECONDS to finish,
 * then the ones still waiting upstream are aborted (and refunded), and the process exits 0.
 */
// First: Deno Deploy takes a cron only while the first module is evaluated (watches/cron_tick.ts).
import { onCronTick } from "./watches/cron_tick.ts";
import { createApp } from "./app.ts";
import { ApiError, errorResponse } from "./core/api_error.ts";
import { type Config, loadConfig, localKvFile, openStore } from "./config.ts";
import { redactUrl } from "./core/redact_url.ts";
import { systemClock } from "./metering/clock.ts";
import { checkUpstream, dataSourceFor, proxiesSet } from "./upstream/select.ts";
import { pageReaderFor } from "./upstream/page_pool.ts";
import { CachingSource } from "./upstream/result_cache.ts";
import { HistorySource } from "./upstream/price_history.ts";
import denoJson from "./deno.json" with { type: "json" };
import { flushOpsLog, opsLog, plainLine, setLoggedSecrets } from "./core/ops_log.ts";
import { consoleLog, flushErrorLog } from "./core/log.ts";
import { supervisedServe } from "./core/supervised_serve.ts";
import { keepServingPast } from "./core/stray_errors.ts";
import { escapeControls } from "./core/escape_controls.ts";
import { parseV4, parseV6 } from "./core/ip_address.ts";
import { allHeld } from "./metering/credits_in_flight.ts";
import { InstanceRoll } from "./metering/instance_roll.ts";
import { pathExists } from "./core/kv_files.ts";

/** What the operator reads first: version, address, store, upstream, sign-up, page workers. */
function startupLine(config: Config, hostname: string, port: number): string {
  // An archive is replayed, never fetched through a proxy (probe EZ: it named unused ones).
  const proxies = config.upstream.startsWith("archive:") ? null : proxiesSet();
  const store = config.kvPath ? redactUrl(config.kvPath) : "Deno Deploy KV";
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return `Shelf ${denoJson.version} listening on http://${host}:${port}/ · store ${store} · ` +
    `upstream ${config.upstream.split(":")[0]} · sign-up ${config.signup} · ` +
    `history ${config.history ? "on" : "off"} · parse workers ${config.parseWorkers}${
      config.parseWorkers === 0 ? " (pages are parsed on the serving thread)" : ""
    } · drain ${config.drainSeconds} s${
      proxies ? ` · ${proxies.count} proxies (${proxies.setting})` : ""
    }`;
}

/** Whether HOST names this machine's loopback, however written ("::1", "0:0:0:0:0:0:0:1", …). */
function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  if (h === "localhost") return true;
  const v4 = parseV4(h);
  if (v4) return v4[0] === 127;
  const g = parseV6(h);
  if (!g) return false;
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  // ::1, or an IPv4-mapped ::ffff:127.x.y.z
  return (zeroTo(7) && g[7] === 1) || (zeroTo(5) && g[5] === 0xffff && g[6] >> 8 === 127);
}

/** Until the app exists (a few milliseconds after the bind): 503 `unavailable`, retry in 1 s. */
function starting(): Response {
  return errorResponse(
    new ApiError(503, "unavailable", "Shelf is starting; retry in a moment.", {
      "Retry-After": "1",
    }),
  );
}

/** How long a stopping process waits for its last log lines to be read (a stalled reader: no more). */
const LAST_LINES_MS = 500;

function cannotListen(config: Config, e: unknown): Error {
  const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
  return new Error(
    `Cannot start: cannot listen on 'HOST' ${config.host} 'PORT' ${config.port}: ${why}`,
  );
}

async function main(): Promise<void> {
  // Every setting first: nothing is opened or created for a configuration that cannot run.
  const config = loadConfig();
  if (config.adminToken) setLoggedSecrets([config.adminToken]);
  // Believed from any client that reaches it directly, a forwarded address takes another's limits.
  if (config.trustProxy && !isLoopback(config.host)) {
    consoleLog.error(
      `'TRUST_PROXY' is set while listening on ${config.host}: a client that reaches Shelf without the proxy can name any address in X-Forwarded-For`,
    );
  }
  // Mailed links (sign-up, password reset, alert addresses) point at PUBLIC_URL: unset, at
  // localhost, which no user's browser reaches (probe DS).
  if (config.smtp && !Deno.env.get("PUBLIC_URL")) {
    consoleLog.error(
      `'PUBLIC_URL' is not set: links in mails point at ${config.publicUrl}/, which users cannot open`,
    );
  }
  const file = localKvFile(config.kvPath);
  checkUpstream(config.upstream, Deno.env, file);
  if (config.port !== 0 && file && !(await pathExists(file))) {
    try {
      Deno.listen({ port: config.port, hostname: config.host }).close();
    } catch (e) {
      throw cannotListen(config, e);
    }
  }
  const kv = await openStore(config.kvPath);

  // Then the address: the loops createApp starts must not run in an instance nobody can reach.
  let app: { fetch: Deno.ServeHandler<Deno.NetAddr> } | null = null;
  const server = supervisedServe(
    { port: config.port, hostname: config.host },
    (req, info) => app ? app.fetch(req, info) : starting(),
    {
      listening: (_addr, restarts) => {
        if (restarts > 0) opsLog({ event: "listening", restarts });
      },
      failed: (e, retryMs) =>
        opsLog({
          event: "listener_failed",
          error: e instanceof Error ? e.message : String(e),
          retry_ms: retryMs,
        }),
    },
  );
  let addr: Deno.NetAddr;
  try {
    addr = await server.ready;
  } catch (e) {
    kv.close();
    throw cannotListen(config, e);
  }

  const pages = pageReaderFor(config.parseWorkers, opsLog);
  const source = dataSourceFor(config.upstream, Deno.env, opsLog, pages);
  // History sees real fetches only: the result cache sits in front of it.
  const recorded = new HistorySource(source, kv, systemClock, {
    enabled: config.history,
    onError: (e) =>
      opsLog({ event: "history_write_failed", error: (e as Error)?.message ?? String(e) }),
  });
  const stopping = new AbortController();
  const drainStarted = new AbortController();
  const created = createApp({
    kv,
    plans: config.plans,
    clock: systemClock,
    dataSource: config.resultCache ? new CachingSource(recorded, kv, systemClock) : recorded,
    adminToken: config.adminToken,
    smtp: config.smtp,
    signup: config.signup,
    trustProxy: config.trustProxy,
    publicUrl: config.publicUrl,
    corsOrigins: config.corsOrigins,
    stopping: stopping.signal,
    draining: drainStarted.signal,
    accessLog: opsLog,
    storeFile: file,
    watches: {
      // A watch pays for a fresh look: its refreshes are recorded in history but not cached.
      source: recorded,
      minSeconds: config.watchMinSeconds,
      allowPrivate: config.webhookAllowPrivate,
      run: true,
    },
  });
  const { deps } = created;
  app = created.app;
  keepServingPast(consoleLog, () => deps.metrics.strayErrors.inc());
  plainLine(startupLine(config, addr.hostname, addr.port));

  // Instances on one store compare their plan catalogs (a mismatch is said on stderr).
  const roll = new InstanceRoll(kv, config.plans, consoleLog);
  void roll.start();

  onCronTick(() => {
    deps.watches.scheduler.wake();
    deps.watches.delivery.wake();
  });

  let draining = false;
  const drain = async (signal: string) => {
    if (draining) return;
    draining = true;
    opsLog({ event: "drain", signal, seconds: config.drainSeconds });
    drainStarted.abort();
    const giveUp = setTimeout(() => stopping.abort(), config.drainSeconds * 1000);
    // A call that ignores the abort, or a mail server that does not answer the alert being sent,
    // must not keep the process past the drain time and 5 s (each send may wait 15 s for it).
    const hardStopAt = Date.now() + config.drainSeconds * 1000 + 5_000 - LAST_LINES_MS;
    const hardStop = setTimeout(
      () => void exit({ event: "stopped", forced: true }),
      hardStopAt - Date.now(),
    );
    // Watch refreshes under way finish within the same drain time (or are aborted and refunded),
    // and so do webhook attempts (or are cut, noted and retried after a restart).
    let serving = true;
    let refreshing = true;
    const shutdown = Promise.all([
      server.shutdown().finally(() => (serving = false)),
      deps.watches.stop(config.drainSeconds * 1000).finally(() => (refreshing = false)),
    ]).then(() => true);
    // Work that may still give credits back: watch refreshes, and calls holding credits.
    const mayRefund = () => refreshing || (serving && allHeld().length > 0);
    // A second past the drain time (for the answers cut at its end to go out), the refunds put
    // off are settled whatever is still open: a request that never ended had kept the stop
    // waiting until it was forced, which skips them (probe BL).
    let late: ReturnType<typeof setTimeout> | undefined;
    const done = await Promise.race([
      shutdown,
      new Promise<false>((
        r,
      ) => (late = setTimeout(() => r(false), config.drainSeconds * 1000 + 1_000))),
    ]);
    clearTimeout(late);
    clearTimeout(giveUp);
    // Refunds still being written (calls cut at the drain's end) get what is left before the
    // forced stop, less time for the lines naming those that did not land; beside the mail loop's
    // stop, not after it: a send waiting on a mail server that does not answer held the settling
    // past the forced stop, which skips it (probe CB).
    await Promise.all([
      deps.delivery?.stop(),
      deps.meter.settleRefunds(Math.max(0, hardStopAt - Date.now() - LAST_LINES_MS), mayRefund),
    ]);
    clearTimeout(hardStop);
    // Calls and watch refreshes still open now never end: what they were charged stays so
    // unless the operator gives it back, so each account's share is named (probe CH).
    for (const [account, credits] of allHeld()) {
      deps.log.error(
        `${credits} credit(s) charged to ${account} by calls or watch refreshes still open at ` +
          "the stop: not given back",
      );
    }
    // Bounded: a store held by another process must not keep the stop waiting.
    await Promise.race([roll.stop(), new Promise((r) => setTimeout(r, LAST_LINES_MS))]);
    if (done) {
      pages.close();
      kv.close();
    }
    await exit({ event: "stopped", ...(done ? {} : { open_requests: true }) });
  };
  /** The last log line, and the lines before it, given LAST_LINES_MS to reach a reader. */
  const exit = async (line: Record<string, unknown>) => {
    opsLog(line);
    await Promise.all([flushOpsLog(LAST_LINES_MS), flushErrorLog(LAST_LINES_MS)]);
    Deno.exit(0);
  };
  // SIGHUP too (a closed terminal, a supervisor's stop): its default ended the process at once,
  // cutting calls in flight whose credits stayed charged, with no line said (probe CP).
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    try {
      Deno.addSignalListener(signal, () => void drain(signal));
    } catch { /* Deno Deploy and Windows have no such signals */ }
  }
}

try {
  await main();
} catch (e) {
  const message = e instanceof Error ? e.message : String(e);
  // A message may quote what the store holds (a restore's mark): one line, escaped, bounded.
  console.error(`shelf: ${escapeControls(message.split("\n")[0].slice(0, 2_048)).slice(0, 2_048)}`);
  Deno.exit(1);
}
