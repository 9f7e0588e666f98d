/** The free, keyless routes: the endpoint index, the OpenAPI document and the interactive docs. */
import type { Hono } from "hono";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";
import { WATCH_ROUTES } from "../schemas/watches.ts";
import { type DocumentSettings, openApiDocument } from "../schemas/openapi.ts";
import { docsRoutes } from "./docs_page.ts";
import { pacedResponse } from "../core/paced_body.ts";

export function metaRoutes(app: Hono, settings: DocumentSettings): void {
  const index = {
    version: "v1",
    endpoints: [
      ...ALL_ENDPOINTS.map((ep) => ({
        path: ep.path,
        method: "GET",
        cost: ep.cost,
        group: ep.group,
        summary: ep.summary,
      })),
      // Free, admitted as products calls; each refresh is charged as a details call (probe EY).
      ...Object.values(WATCH_ROUTES).map((r) => ({ ...r, cost: 0, group: "products" })),
    ],
  };
  app.get("/v1/", () => Response.json(index));
  app.get("/v1", () => Response.json(index));
  // Serialized once, on first asking: 95 KB, the same for every request of this server.
  let openApi: Uint8Array<ArrayBuffer> | undefined;
  app.get("/openapi.json", () => {
    openApi ??= new TextEncoder().encode(JSON.stringify(openApiDocument(settings)));
    return pacedResponse(openApi, { "content-type": "application/json" });
  });
  docsRoutes(app);
}
