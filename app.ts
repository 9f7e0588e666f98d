/**
 * The service as a Hono app over its dependencies. main.ts supplies real ones; tests supply a
 * temporary KV file, an injected clock and a data source that answers or fails on demand.
 */
import { Hono } from "hono";
import type { Clock } from "./metering/clock.ts";
import type { Plans } from "./metering/plans.ts";
import { AccountError, Accounts } from "./metering/accounts.ts";
import { Meter } from "./metering/meter.ts";
import type { DataSource } from "./upstream/data_source.ts";
import { DATA_ENDPOINTS } from "./schemas/endpoints.ts";
import { ApiError, errorResponse } from "./core/api_error.ts";
import { dataRoutes } from "./routes/data.ts";
import { usageRoute } from "./routes/usage.ts";
import { metaRoutes } from "./routes/meta.ts";
import { adminRoutes } from "./routes/admin.ts";
import { storeRefusal } from "./routes/store_refusal.ts";
import { dashboardRoutes } from "./routes/dashboard/mod.tsx";
import { bodyLimits, type BodyReading } from "./routes/body_limit.ts";
import { requestPath, requestTarget } from "./routes/request_target.ts";
import { requestLog } from "./routes/access_log.ts";
import { oneLayer, under } from "./routes/one_layer.ts";
import { headLength } from "./routes/head_length.ts";
import { opsRoutes } from "./routes/ops.ts";
import { type Metrics, metrics as processMetrics } from "./core/metrics.ts";
import { type CorsOrigins, v1Methods } from "./routes/methods.ts";
import { AlertDelivery, type DeliveryTiming } from "./mail/alert_delivery.ts";
import { parseSmtpUrl } from "./mail/smtp.ts";
import { type Deps, type SignupMode } from "./routes/deps.ts";
import { consoleLog, type Log } from "./core/log.ts";
import { Watches, type WatchOptions } from "./watches/mod.ts";
import { watchRoutes } from "./routes/watches.ts";
import { AdminGuard } from "./routes/admin_guard.ts";
import { securityHeaders } from "./routes/dashboard/guard.ts";

export interface AppOptions {
  kv: Deno.Kv;
  plans: Plans;
  clock: Clock;
  dataSource: DataSource;
  adminToken?: string;
  log?: Log;
  /** SMTP_URL and SMTP_FROM; when given, the alert delivery loop starts (stop: deps.delivery.stop()). */
  smtp?: { url: string; from?: string; timing?: Partial<DeliveryTiming>; timeoutMs?: number };
  /** SIGNUP (config.ts decides the default; here unset means closed). */
  signup?: SignupMode;
  /** TRUST_PROXY: proxies in front (true: one). */
  trustProxy?: boolean | number;
  publicUrl?: string;
  /** CORS_ORIGINS: browsers from these origins may call /v1. */
  corsOrigins?: CorsOrigins;
  /** See Deps.stopping; main.ts aborts it at the end of DRAIN_SECONDS. */
  stopping?: AbortSignal;
  /**
   * Aborted when the drain starts (main.ts), before the listener closes: the runtime's shutdown
   * drops the request bodies still arriving, which are then the stop's 503, not a client's 400.
   */
  draining?: AbortSignal;
  /** Where access-log lines go (main.ts: stdout as JSON lines); unset writes none. */
  accessLog?: (line: Record<string, unknown>) => void;
  metrics?: Metrics;
  /** WATCH_MIN_SECONDS, WEBHOOK_ALLOW_PRIVATE, and whether the refresh loops run. */
  watches?: WatchOptions;
  /** Limits on reading request bodies (routes/body_limit.ts); tests set them lower. */
  bodyReading?: Partial<BodyReading>;
  /** The local store's file (KV_PATH), which /readyz checks is still the one opened. */
  storeFile?: string;
}

export function createApp(opts: AppOptions): { app: Hono; deps: Deps } {
  const accounts = new Accounts(opts.kv, opts.plans, opts.clock);
  const meter = new Meter(opts.kv, opts.plans, opts.clock);
  accounts.onChange = (id) => meter.forget(id);
  const log = opts.log ?? consoleLog;
  const mailer = opts.smtp
    ? parseSmtpUrl(opts.smtp.url, opts.smtp.from, opts.smtp.timeoutMs)
    : null;
  const delivery = mailer && opts.smtp
    ? new AlertDelivery(opts.kv, mailer, log, opts.smtp.timing)
    : null;
  const stopping = opts.stopping ?? new AbortController().signal;
  const metrics = opts.metrics ?? processMetrics;
  const watches = new Watches(
    {
      kv: opts.kv,
      meter,
      dataSource: opts.dataSource,
      log,
      stopping,
      onCharged: (n) => metrics.creditsCharged.inc(n),
    },
    opts.watches,
  );
  const deps: Deps = {
    ...opts,
    accounts,
    meter,
    log,
    delivery,
    mailer,
    signup: opts.signup ?? "closed",
    trustProxy: Number(opts.trustProxy ?? 0),
    publicUrl: opts.publicUrl ?? "http://localhost:8000",
    stopping,
    metrics,
    watches,
  };
  watches.start();
  if (delivery) {
    meter.onAlert = () => delivery.wake();
    delivery.start();
  }

  const app = new Hono({ getPath: requestPath });
  app.use(
    "*",
    requestLog({
      log: opts.accessLog ?? null,
      metrics: deps.metrics,
      secrets: opts.adminToken ? [opts.adminToken] : [],
    }),
  );
  // The dashboard's security headers go on every page under it, the body limits' refusals too.
  app.use("/dashboard", securityHeaders());
  app.use("/dashboard/*", securityHeaders());
  // What every request passes before its route, as one layer: each of Hono's costs a call.
  app.use(
    "*",
    oneLayer(
      headLength(),
      requestTarget(),
      bodyLimits(deps.trustProxy, opts.bodyReading, stopping, opts.draining),
      under("/v1", v1Methods(opts.corsOrigins ?? null)),
    ),
  );
  metaRoutes(app, {
    watchMinSeconds: deps.watches.minSeconds,
    allowPrivateWebhooks: deps.watches.allowPrivate,
  });
  // One count of failed admin tokens per client, for /admin and /metrics alike.
  const adminGuard = new AdminGuard(deps.trustProxy, opts.accessLog ?? (() => {}));
  opsRoutes(app, deps, opts.adminToken, adminGuard);
  usageRoute(app, deps);
  dataRoutes(app, deps, DATA_ENDPOINTS);
  watchRoutes(app, deps);
  if (opts.adminToken) adminRoutes(app, deps, opts.adminToken, adminGuard);
  dashboardRoutes(app, deps);

  app.notFound(() =>
    errorResponse(new ApiError(404, "not_found", "No such endpoint; see GET /v1/ for the list."))
  );
  app.onError((err) => {
    if (err instanceof ApiError) return errorResponse(err);
    if (err instanceof AccountError) {
      return errorResponse(new ApiError(err.status, err.code, err.message));
    }
    const refused = storeRefusal(err, deps);
    if (refused) return errorResponse(refused);
    deps.log.error("unhandled error", err);
    return errorResponse(
      new ApiError(
        503,
        "unavailable",
        "The service could not complete the request; retry shortly.",
      ),
    );
  });
  return { app, deps };
}
