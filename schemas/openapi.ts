/**
 * The OpenAPI 3.1 document, generated from the endpoint table's zod schemas: every response a
 * named component, the credit and rate-limit headers, the three ways to send a key, and the two
 * error shapes, with examples that are Shelf's own answers to real Amazon pages.
 */
import { z } from "zod";
import { ALL_ENDPOINTS, type Endpoint } from "./endpoints.ts";
import { BodyValidationErrorBody, ErrorBody, ValidationErrorBody } from "./resources.ts";
import examples from "./examples.json" with { type: "json" };
import { BODY_SECONDS, JSON_BODY_LIMIT } from "./request_limits.ts";
import {
  WATCH_ROUTES,
  watchCreateBody,
  WatchCreated,
  WatchDeleted,
  WatchEvent,
  WatchList,
} from "./watches.ts";

/** Real answers to real corpus pages (demo/examples.ts builds them), keyed by endpoint name. */
const EXAMPLES: Record<string, { source: string; value: unknown }> = examples;

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
/** On 429 and 503 answers (SPEC.md); not one of the meter's headers on every answer. */
const RETRY_AFTER = {
  description: "Seconds to wait before trying again.",
  schema: { type: "integer" },
};
/** Headers that are not the meter's: on every answer, on a cached one, on a 405. */
const OTHER_HEADERS = {
  "X-Request-Id": {
    description:
      "The request's id, in the access log too: the client's own (1-64 of `[A-Za-z0-9._-]`), or a new UUID when it is not one or looks like a secret (a run of 48 hex digits or more, as keys and tokens hold).",
    schema: { type: "string" },
  },
  Age: {
    description: "Seconds since the answer was fetched, on an answer from the result cache.",
    schema: { type: "integer" },
  },
  Allow: { description: "The methods the path takes.", schema: { type: "string" } },
};
const requestIdRef = { "X-Request-Id": ref("headers", "X-Request-Id") };
const meterHeaderRefs = {
  ...Object.fromEntries(Object.keys(METER_HEADERS).map((h) => [h, ref("headers", h)])),
  ...requestIdRef,
};

/** Each error response: its description, and one example body (code, status, message). */
const ERROR_RESPONSES: Record<string, [string, string, number, string]> = {
  Unauthorized: [
    "unauthorized: no key, or an unknown or revoked key",
    "unauthorized",
    401,
    "A valid API key is required: send it in the x-api-key header or as Authorization: Bearer <key>.",
  ],
  Forbidden: [
    "forbidden: inactive subscription, or the plan lacks the endpoint group",
    "forbidden",
    403,
    "This key's subscription is inactive or its plan does not include this endpoint group.",
  ],
  TooManyRequests: [
    "rate_limited, quota_exhausted, or too many of this client's request bodies being read at once; Retry-After on all but a quota_exhausted whose credits are used up (they reset at X-Credits-Reset)",
    "rate_limited",
    429,
    "Too many requests this second for this key; wait and retry.",
  ],
  NotFound: [
    "not_found: unknown ASIN, ended deal, …",
    "not_found",
    404,
    "The marketplace has no page at https://www.amazon.com/dp/B000000000.",
  ],
  MethodNotAllowed: [
    "method_not_allowed: the path does not take this method; Allow lists the ones it does (GET for every data endpoint)",
    "method_not_allowed",
    405,
    "Every /v1 endpoint is GET only.",
  ],
  UpstreamError: [
    "upstream_error: the marketplace answered something Shelf could not read",
    "upstream_error",
    502,
    "The upstream page did not yield a complete answer.",
  ],
  UpstreamBlocked: [
    "upstream_blocked (a robot check persisted after retries, or the account's calls pause after blocked ones), upstream_busy (too many of the account's calls wait for the marketplace), busy (the account's store record is contended) or unavailable (the store cannot be written, too many request bodies being read, the service stopping); Retry-After on all but an upstream_blocked answered for a page that was blocked (a robot check, a captcha or a sign-in wall: retrying at once meets it again)",
    "upstream_blocked",
    503,
    "The marketplace kept answering with a robot check.",
  ],
  PayloadTooLarge: [
    `payload_too_large: the request body is over ${JSON_BODY_LIMIT / 1024} KiB`,
    "payload_too_large",
    413,
    `The request body is larger than ${JSON_BODY_LIMIT / 1024} KiB.`,
  ],
  RequestTimeout: [
    `request_timeout: the request body did not arrive within ${BODY_SECONDS} seconds`,
    "request_timeout",
    408,
    `The request body did not arrive within ${BODY_SECONDS} seconds.`,
  ],
  BadRequest: [
    "bad_request: the Host header is not a host name, or the request body did not arrive whole (the client hung up mid-body)",
    "bad_request",
    400,
    "The request body did not arrive whole.",
  ],
  UriTooLong: [
    "uri_too_long: the request's URL is over 16 KiB",
    "uri_too_long",
    414,
    "The request URL is longer than 16384 characters.",
  ],
  UpstreamTimeout: [
    "upstream_timeout: the marketplace did not answer in time",
    "upstream_timeout",
    504,
    "The marketplace did not answer within 30000 ms.",
  ],
};

function errorResponse(
  [description, code, status, message]: [string, string, number, string],
  withMeter: boolean,
) {
  const headers = {
    ...(withMeter ? meterHeaderRefs : requestIdRef),
    ...(status === 429 || status === 503 ? { "Retry-After": ref("headers", "Retry-After") } : {}),
    ...(status === 405 ? { Allow: ref("headers", "Allow") } : {}),
  };
  return {
    description,
    ...(Object.keys(headers).length ? { headers } : {}),
    content: {
      "application/json": {
        schema: ref("schemas", "Error"),
        example: { error: { code, message, status } },
      },
    },
  };
}

/** The 200 example of an endpoint, when a real page gave one. */
function example200(ep: Endpoint) {
  const e = EXAMPLES[ep.name];
  if (!e) return {};
  return {
    examples: {
      corpus: {
        summary: "A real Amazon page's answer (lists cut to two items)",
        description: `Shelf's answer to ${e.source}, a real saved Amazon page.`,
        value: e.value,
      },
    },
  };
}

function operation(ep: Endpoint) {
  const parameters = Object.entries(ep.params).map(([name, p]) => {
    const schema = jsonSchema(p.schema);
    return { name, in: "query", required: p.required, description: schema.description, schema };
  });
  const secured = ep.name !== "index";
  // Data endpoints go to the marketplace; /v1/usage reads the store only, and is not rate-counted.
  const upstream = ep.group !== null;
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
        headers: secured
          ? { ...meterHeaderRefs, ...(upstream ? { Age: ref("headers", "Age") } : {}) }
          : requestIdRef,
        content: {
          "application/json": {
            schema: ref("schemas", responseComponentName(ep)),
            ...example200(ep),
          },
        },
      },
      ...BEFORE_ANY_ROUTE,
      "405": ref("responses", "MethodNotAllowed"),
      ...(secured
        ? {
          "401": ref("responses", "Unauthorized"),
          "403": ref("responses", "Forbidden"),
          "503": ref("responses", "UpstreamBlocked"),
        }
        : {}),
      ...(upstream
        ? {
          "404": ref("responses", "NotFound"),
          "422": {
            description: "A parameter failed validation (pydantic-style `detail`)",
            headers: meterHeaderRefs,
            content: { "application/json": { schema: ref("schemas", "ValidationError") } },
          },
          "429": ref("responses", "TooManyRequests"),
          "502": ref("responses", "UpstreamError"),
          "504": ref("responses", "UpstreamTimeout"),
        }
        : {}),
    },
  };
}

/** Answers given before the key is read, so without its credit and rate headers (probe EY). */
const BEFORE_THE_KEY = ["Unauthorized", "MethodNotAllowed", "BadRequest", "UriTooLong"];

/** What any path may answer before its route runs: a bad Host (400), a URL over 16 KiB (414). */
const BEFORE_ANY_ROUTE = {
  "400": ref("responses", "BadRequest"),
  "414": ref("responses", "UriTooLong"),
};

/** POST/GET /v1/watches and DELETE /v1/watches/{id} (INTERFACE.md "Beyond the spec"). */
function watchPaths() {
  const common = {
    ...BEFORE_ANY_ROUTE,
    "401": ref("responses", "Unauthorized"),
    "403": ref("responses", "Forbidden"),
    "405": ref("responses", "MethodNotAllowed"),
    "429": ref("responses", "TooManyRequests"),
    "503": ref("responses", "UpstreamBlocked"),
  };
  const json = (name: string) => ({
    content: { "application/json": { schema: ref("schemas", name) } },
  });
  return {
    "/v1/watches": {
      post: {
        summary: WATCH_ROUTES.create.summary,
        description: "Free to create. The service refreshes the product every `every_seconds` " +
          "(at least WATCH_MIN_SECONDS, default 3600), each refresh charged as a details call " +
          "of this key; without credits the watch pauses. The first refresh records the " +
          "values; later changes in a watched field POST a `WatchEvent` to `webhook_url`, " +
          'signed `Shelf-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the ' +
          "secret>` and retried with exponential back-off for a day. Private and loopback " +
          "webhook hosts are refused unless WEBHOOK_ALLOW_PRIVATE=1.",
        operationId: "watch_create",
        tags: ["products"],
        "x-credits-cost": 0,
        requestBody: { required: true, ...json("WatchCreateBody") },
        responses: {
          "201": {
            description: "Created; `secret` is shown only here",
            headers: meterHeaderRefs,
            ...json("WatchCreated"),
          },
          ...common,
          "408": ref("responses", "RequestTimeout"),
          "413": ref("responses", "PayloadTooLarge"),
          "409": {
            description: "watch_limit_reached: the account holds the most watches it may",
            headers: meterHeaderRefs,
            ...json("Error"),
          },
          "422": {
            description: "A body field failed validation (`loc` starts with `body`)",
            headers: meterHeaderRefs,
            ...json("BodyValidationError"),
          },
        },
        callbacks: {
          watchChanged: {
            "{$request.body#/webhook_url}": {
              post: {
                requestBody: { required: true, ...json("WatchEvent") },
                responses: { "2XX": { description: "Received; any other answer is retried" } },
              },
            },
          },
        },
      },
      get: {
        summary: WATCH_ROUTES.list.summary,
        description: "Free.",
        operationId: "watch_list",
        tags: ["products"],
        "x-credits-cost": 0,
        responses: {
          "200": { description: "OK", headers: meterHeaderRefs, ...json("WatchList") },
          ...common,
        },
      },
    },
    "/v1/watches/{id}": {
      delete: {
        summary: WATCH_ROUTES.remove.summary,
        description: "Free. Its pending webhook events are dropped.",
        operationId: "watch_delete",
        tags: ["products"],
        "x-credits-cost": 0,
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": { description: "Deleted", headers: meterHeaderRefs, ...json("WatchDeleted") },
          ...common,
          "404": ref("responses", "NotFound"),
        },
      },
    },
  };
}

/** What a server's own settings change in the document: the watch body's limits. */
export interface DocumentSettings {
  watchMinSeconds: number;
  allowPrivateWebhooks: boolean;
}

export function openApiDocument(
  settings: DocumentSettings = { watchMinSeconds: 3_600, allowPrivateWebhooks: false },
): unknown {
  return {
    openapi: "3.1.0",
    info: {
      title: "Shelf",
      version: "1.0.0",
      description:
        "Metered, read-only JSON API for Amazon marketplace retail data. Send the key as " +
        "`x-api-key`, as `Authorization: Bearer`, or (discouraged) as the `api_key` query parameter. " +
        "Query values are read as pydantic reads them: spaces around a value are dropped; ids " +
        "(ASIN, seller, review) and marketplace codes are taken in any case, a-z upper-cased " +
        "before the pattern is checked; booleans take true/false, 1/0, yes/no, y/n, on/off, t/f; " +
        "integers may carry a sign or leading zeros; a parameter given twice takes its last value.",
    },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }, { bearer: [] }, { apiKeyQuery: [] }],
    paths: {
      ...Object.fromEntries(ALL_ENDPOINTS.map((ep) => [ep.path, { get: operation(ep) }])),
      ...watchPaths(),
    },
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
      headers: { ...METER_HEADERS, ...OTHER_HEADERS, "Retry-After": RETRY_AFTER },
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map((
          [name, e],
        ) => [name, errorResponse(e, !BEFORE_THE_KEY.includes(name))]),
      ),
      schemas: {
        Error: jsonSchema(ErrorBody),
        ValidationError: jsonSchema(ValidationErrorBody),
        BodyValidationError: jsonSchema(BodyValidationErrorBody),
        ...Object.fromEntries(
          ALL_ENDPOINTS.map((ep) => [responseComponentName(ep), jsonSchema(ep.response)]),
        ),
        WatchCreateBody: jsonSchema(
          watchCreateBody(settings.watchMinSeconds, settings.allowPrivateWebhooks),
        ),
        WatchCreated: jsonSchema(WatchCreated),
        WatchList: jsonSchema(WatchList),
        WatchDeleted: jsonSchema(WatchDeleted),
        WatchEvent: jsonSchema(WatchEvent),
      },
    },
  };
}
