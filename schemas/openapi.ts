/**
 * The OpenAPI 3.1 document, generated from the endpoint table's zod schemas: every response a
 * named component, the credit and rate-limit headers, the three ways to send a key, and the two
 * error shapes.
 */
import { z } from "zod";
import { ALL_ENDPOINTS, type Endpoint } from "./endpoints.ts";
import { ErrorBody, ValidationErrorBody } from "./resources.ts";

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { unrepresentable: "any" }) as Record<string, unknown>;
  delete s.$schema;
  return s;
}

/** `reviews_top` → `ReviewsTopResponse`: the component name of an endpoint's 200 body. */
export function responseComponentName(ep: Endpoint): string {
  return ep.name.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("") + "Response";
}

const ref = (kind: "schemas" | "headers" | "responses", name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

const METER_HEADERS = {
  "X-Credits-Reset": {
    description: "End of the current 30-day credit period (UTC, ISO 8601).",
    schema: { type: "string", format: "date-time" },
  },
  "X-Credits-Remaining": {
    description: "Credits left in the period after this call.",
    schema: { type: "integer" },
  },
  "X-Credits-Cost": {
    description: "Credits this call charged (0 for a failed call).",
    schema: { type: "integer" },
  },
  "RateLimit-Policy": {
    description:
      'IETF RateLimit-Policy of the per-key one-second window, e.g. `"per-key";q=5;w=1`.',
    schema: { type: "string" },
  },
  RateLimit: {
    description:
      'IETF RateLimit: calls left in the current second and seconds to its end, e.g. `"per-key";r=4;t=1`.',
    schema: { type: "string" },
  },
};
const meterHeaderRefs = Object.fromEntries(
  Object.keys(METER_HEADERS).map((h) => [h, ref("headers", h)]),
);

const ERROR_RESPONSES = {
  Unauthorized: "unauthorized: no key, or an unknown or revoked key",
  Forbidden: "forbidden: inactive subscription, or the plan lacks the endpoint group",
  TooManyRequests: "rate_limited (with Retry-After: 1) or quota_exhausted",
  NotFound: "not_found: unknown ASIN, ended deal, …",
  MethodNotAllowed: "method_not_allowed: every /v1 endpoint is GET only (Allow: GET)",
  UpstreamError: "upstream_error: the marketplace answered something Shelf could not read",
  UpstreamBlocked: "upstream_blocked: a robot check persisted after retries",
  UpstreamTimeout: "upstream_timeout: the marketplace did not answer in time",
};

function errorResponse(description: string, withMeter: boolean) {
  return {
    description,
    ...(withMeter ? { headers: meterHeaderRefs } : {}),
    content: { "application/json": { schema: ref("schemas", "Error") } },
  };
}

function operation(ep: Endpoint) {
  const parameters = Object.entries(ep.params).map(([name, p]) => {
    const schema = jsonSchema(p.schema);
    return { name, in: "query", required: p.required, description: schema.description, schema };
  });
  const secured = ep.name !== "index";
  return {
    summary: ep.summary,
    description: secured
      ? `Costs ${ep.cost} credit${
        ep.cost === 1 ? "" : "s"
      } when it succeeds; a failed call costs nothing.`
      : "Free, no key needed.",
    operationId: ep.name,
    tags: [ep.group ?? "account"],
    "x-credits-cost": ep.cost,
    ...(secured ? {} : { security: [] }),
    parameters,
    responses: {
      "200": {
        description: "OK",
        ...(secured ? { headers: meterHeaderRefs } : {}),
        content: { "application/json": { schema: ref("schemas", responseComponentName(ep)) } },
      },
      ...(secured
        ? {
          "401": ref("responses", "Unauthorized"),
          "403": ref("responses", "Forbidden"),
          "404": ref("responses", "NotFound"),
          "405": ref("responses", "MethodNotAllowed"),
          "422": {
            description: "A parameter failed validation (pydantic-style `detail`)",
            headers: meterHeaderRefs,
            content: { "application/json": { schema: ref("schemas", "ValidationError") } },
          },
          "429": ref("responses", "TooManyRequests"),
          "502": ref("responses", "UpstreamError"),
          "503": ref("responses", "UpstreamBlocked"),
          "504": ref("responses", "UpstreamTimeout"),
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
      description:
        "Metered, read-only JSON API for Amazon marketplace retail data. Send the key as " +
        "`x-api-key`, as `Authorization: Bearer`, or (discouraged) as the `api_key` query parameter.",
    },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }, { bearer: [] }, { apiKeyQuery: [] }],
    paths: Object.fromEntries(ALL_ENDPOINTS.map((ep) => [ep.path, { get: operation(ep) }])),
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        bearer: { type: "http", scheme: "bearer", description: "The API key as a Bearer token." },
        apiKeyQuery: {
          type: "apiKey",
          in: "query",
          name: "api_key",
          description:
            "Last resort for clients that cannot set headers; the key ends up in logs of proxies.",
        },
      },
      headers: METER_HEADERS,
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map((
          [name, text],
        ) => [name, errorResponse(text, name !== "Unauthorized" && name !== "MethodNotAllowed")]),
      ),
      schemas: {
        Error: jsonSchema(ErrorBody),
        ValidationError: jsonSchema(ValidationErrorBody),
        ...Object.fromEntries(
          ALL_ENDPOINTS.map((ep) => [responseComponentName(ep), jsonSchema(ep.response)]),
        ),
      },
    },
  };
  return cached;
}
