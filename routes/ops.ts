/**
 * The operator's routes (INTERFACE.md "Operations"): `/healthz` (the process serves), `/readyz`
 * (the store answers a read within a second), `/metrics` (Prometheus text, behind the admin
 * token) and `/`, a short landing page. None needs a key or costs anything.
 */
import type { Hono } from "hono";
import type { Deps } from "./deps.ts";
import type { AdminGuard } from "./admin_guard.ts";
import { ApiError, errorResponse } from "../core/api_error.ts";
import { adminAuth } from "./admin.ts";
import { fileIdentity } from "../core/kv_files.ts";

const READY_TIMEOUT_MS = 1_000;

const LANDING = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Shelf</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem">
<h1>Shelf</h1>
<p>A metered JSON API for Amazon marketplace data.</p>
<ul>
<li><a href="/docs">API documentation</a> (and the <a href="/openapi.json">OpenAPI document</a>)</li>
<li><a href="/dashboard">Dashboard</a>: keys, usage, alerts</li>
<li><a href="/healthz">Health</a></li>
</ul>
</body></html>`;

export function opsRoutes(
  app: Hono,
  deps: Deps,
  adminToken: string | undefined,
  guard?: AdminGuard,
): void {
  app.get("/", () =>
    new Response(LANDING, {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy":
          "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        "x-content-type-options": "nosniff",
      },
    }));

  app.get("/healthz", () => Response.json({ status: "ok" }));

  // The file the store was opened on: deleted or replaced under a running process, every write
  // went to a file no later start would open, while /readyz said ready (probe CP).
  const opened = deps.storeFile ? fileIdentity(deps.storeFile) : null;
  app.get("/readyz", async () => {
    if (opened && fileIdentity(deps.storeFile!) !== opened) {
      return errorResponse(
        new ApiError(
          503,
          "not_ready",
          "The store's file (KV_PATH) was removed or replaced since start-up; restart the service.",
        ),
      );
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((
      r,
    ) => (timer = setTimeout(() => r("late"), READY_TIMEOUT_MS)));
    try {
      const answer = await Promise.race([
        deps.kv.get(["readyz_probe"]).then(() => "ok" as const),
        late,
      ]);
      if (answer === "ok") return Response.json({ status: "ready" });
      return errorResponse(
        new ApiError(
          503,
          "not_ready",
          `The store did not answer a read within ${READY_TIMEOUT_MS} ms.`,
        ),
      );
    } catch {
      return errorResponse(new ApiError(503, "not_ready", "The store cannot be read."));
    } finally {
      clearTimeout(timer);
    }
  });

  if (adminToken) {
    app.get(
      "/metrics",
      adminAuth(adminToken, guard),
      async () =>
        new Response(await deps.metrics.render(), {
          headers: { "content-type": deps.metrics.contentType },
        }),
    );
  }
}
