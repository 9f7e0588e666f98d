/**
 * Interactive API docs at /docs: swagger-ui-dist's page over /openapi.json, its script and style
 * served by Shelf from the npm package (embedded at build time, so no CDN and no network: self
 * hosters are often offline), and no inline script, so the page keeps a strict CSP.
 */
import type { Hono } from "hono";
import { pacedResponse } from "../core/paced_body.ts";
import css from "swagger-ui-dist/swagger-ui.css" with { type: "text" };
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };

const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#docs",
  deepLinking: true,
  tryItOutEnabled: true,
  persistAuthorization: false,
});`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Shelf API docs</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="docs"></div>
<script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`;

// swagger-ui sets inline styles and shows schema images as data: URLs; nothing else is allowed.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function asset(text: string, type: string, immutable: boolean): () => Response {
  // Encoded once: a string body is encoded to UTF-8 again for every response, 1.5 MB of it for
  // the bundle, on the thread that serves paid calls (a flood of it took their p50 from 3 to 300 ms).
  const body = new TextEncoder().encode(text);
  return () =>
    pacedResponse(body, {
      "content-type": type,
      "x-content-type-options": "nosniff",
      // The assets change only with the package version, which changes the deployment.
      "cache-control": immutable ? "public, max-age=86400" : "no-cache",
      ...(type.startsWith("text/html") ? { "content-security-policy": CSP } : {}),
    });
}

export function docsRoutes(app: Hono): void {
  app.get("/docs", asset(PAGE, "text/html; charset=utf-8", false));
  app.get("/docs/", asset(PAGE, "text/html; charset=utf-8", false));
  app.get("/docs/swagger-ui.css", asset(css, "text/css; charset=utf-8", true));
  app.get("/docs/swagger-ui-bundle.js", asset(bundle, "text/javascript; charset=utf-8", true));
  app.get("/docs/init.js", asset(INIT, "text/javascript; charset=utf-8", false));
}
