/** The free, keyless routes: the endpoint index, the OpenAPI document and the interactive docs. */
import type { Hono } from "hono";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";
import { openApiDocument } from "../schemas/openapi.ts";
import { docsRoutes } from "./docs_page.ts";

export function metaRoutes(app: Hono): void {
  const index = {
    version: "v1",
    endpoints: ALL_ENDPOINTS.map((ep) => ({
      path: ep.path,
      method: "GET",
      cost: ep.cost,
      group: ep.group,
      summary: ep.summary,
    })),
  };
  app.get("/v1/", () => Response.json(index));
  app.get("/v1", () => Response.json(index));
  app.get("/openapi.json", () => Response.json(openApiDocument()));
  docsRoutes(app);
}
