/** The OpenAPI 3.1 document, generated from the endpoint table's zod schemas. */
import { z } from "zod";
import { ALL_ENDPOINTS, type Endpoint } from "./endpoints.ts";
import { ErrorBody, ValidationErrorBody } from "./resources.ts";

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { unrepresentable: "any" }) as Record<string, unknown>;
  delete s.$schema;
  return s;
}

const errorContent = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

function operation(ep: Endpoint) {
  const parameters = Object.entries(ep.params).map(([name, p]) => {
    const schema = jsonSchema(p.schema);
    return { name, in: "query", required: p.required, description: schema.description, schema };
  });
  const secured = ep.name !== "index";
  return {
    summary: ep.summary,
    operationId: ep.name,
    tags: [ep.group ?? "account"],
    "x-credits-cost": ep.cost,
    ...(secured ? {} : { security: [] }),
    parameters,
    responses: {
      "200": { description: "OK", content: { "application/json": { schema: jsonSchema(ep.response) } } },
      ...(secured
        ? {
          "401": errorContent("unauthorized: no key, or an unknown or revoked key"),
          "403": errorContent("forbidden: inactive subscription, or the plan lacks the endpoint group"),
          "422": {
            description: "A parameter failed validation",
            content: { "application/json": { schema: { $ref: "#/components/schemas/ValidationError" } } },
          },
          "429": errorContent("rate_limited (Retry-After: 1) or quota_exhausted"),
          "404": errorContent("not_found: unknown ASIN, ended deal, …"),
          "502": errorContent("upstream_error"),
          "503": errorContent("upstream_blocked"),
          "504": errorContent("upstream_timeout"),
        }
        : {}),
    },
  };
}

let cached: unknown;

export function openApiDocument(): unknown {
  cached ??= {
    openapi: "3.1.0",
    info: {
      title: "Shelf",
      version: "1.0.0",
      description: "Metered, read-only JSON API for Amazon marketplace retail data.",
    },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }, { bearer: [] }],
    paths: Object.fromEntries(ALL_ENDPOINTS.map((ep) => [ep.path, { get: operation(ep) }])),
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        bearer: { type: "http", scheme: "bearer" },
      },
      schemas: { Error: jsonSchema(ErrorBody), ValidationError: jsonSchema(ValidationErrorBody) },
    },
  };
  return cached;
}
