/**
 * `POST /v1/watches`, `GET /v1/watches`, `DELETE /v1/watches/{id}` (INTERFACE.md "Beyond the
 * spec"). Each is admitted as a products call of 0 credits: the key must be active, the plan must
 * include the products group, and the call takes a slot of the key's one-second window (POST
 * resolves a client-chosen host name, which must not be free to repeat). Creating, listing and
 * deleting cost no credit; each refresh is charged as a details call (watches/scheduler.ts). A body is validated field by field into
 * the spec's 422 shape, with `asin`, `marketplace` and `zip` held to the details endpoint's own
 * rules; the webhook URL must pass the SSRF rules of watches/webhook_target.ts.
 */
import type { Context, Hono } from "hono";
import type { z } from "zod";
import type { Deps } from "./deps.ts";
import { authenticate } from "./authenticate.ts";
import { pathSegment, queryParams } from "./query_params.ts";
import { refusalError } from "./refusals.ts";
import { validateQuery } from "./validate_query.ts";
import { noteCall, textWithRequestId } from "./access_log.ts";
import { meterHeaders } from "./meter_headers.ts";
import { ApiError } from "../core/api_error.ts";
import { DETAILS_ENDPOINT } from "../schemas/endpoints.ts";
import { MAX_WATCHES_PER_ACCOUNT, watchCreateBody, type WatchView } from "../schemas/watches.ts";
import { createWatch, deleteWatch, listWatches, newWatch, type Watch } from "../watches/store.ts";
import { webhookRefusal } from "../watches/webhook_target.ts";
import { PerSecond } from "../core/per_second.ts";
import { describeIssue, MISSING, reportedIssues } from "./pydantic_issues.ts";

interface BodyError {
  loc: (string | number)[];
  msg: string;
  type: string;
  input: unknown;
}

/**
 * Lists an account may have built in one second, whatever its keys. Listing is free and takes
 * only a slot of the key's window, and a full list runs to hundreds of KB (100 watches, their
 * webhook URLs and latest delivery notes): one key at 100 lists a second held half a core building
 * them, five keys of one account the whole machine, and another account's calls went from 2 ms to
 * 300 ms (probe R). Counted in each process. Not lower: a client polling every 100 ms makes
 * 11 calls in some seconds, and 10 a second made such a client (one of the tests) see 429s.
 */
export const LISTS_PER_SECOND = 25;

export function watchRoutes(app: Hono, deps: Deps): void {
  const lists = new PerSecond(LISTS_PER_SECOND);
  app.post("/v1/watches", async (c) => {
    const caller = await admitted(deps, c);
    const input = await readBody(c, deps.watches.minSeconds);
    if ("detail" in input) return c.json({ detail: input.detail }, 422, caller.headers);
    const body = input.value;
    const params = validateQuery(
      DETAILS_ENDPOINT.params,
      new Map(
        Object.entries({ asin: body.asin, marketplace: body.marketplace, zip: body.zip })
          .filter(([, v]) => v !== undefined).map(([k, v]) => [k, [v as string]]),
      ),
    );
    if (!params.ok) {
      return c.json(
        { detail: params.detail.map((d) => ({ ...d, loc: ["body", d.loc[1]] })) },
        422,
        caller.headers,
      );
    }
    const refusal = await webhookRefusal(
      body.webhook_url,
      deps.watches.allowPrivate,
      deps.watches.resolve,
    );
    if (refusal) {
      return c.json(
        {
          detail: [{
            loc: ["body", "webhook_url"],
            msg: `The webhook URL cannot be used: ${refusal}`,
            type: "value_error",
            input: body.webhook_url,
          }],
        },
        422,
        caller.headers,
      );
    }
    const watch = newWatch({
      account_id: caller.accountId,
      key_id: caller.keyId,
      asin: params.value.asin as string,
      marketplace: params.value.marketplace as string,
      zip: (params.value.zip as string | undefined) ?? null,
      every_seconds: body.every_seconds,
      webhook_url: body.webhook_url,
      on: [...new Set(body.on)],
    }, Date.now());
    if (!await createWatch(deps.kv, watch, MAX_WATCHES_PER_ACCOUNT)) {
      throw new ApiError(
        409,
        "watch_limit_reached",
        `An account may hold ${MAX_WATCHES_PER_ACCOUNT} watches; delete one first.`,
        caller.headers,
      );
    }
    deps.watches.scheduler.wake();
    return c.json({ ...watchView(watch), secret: watch.secret }, 201, caller.headers);
  });

  app.get("/v1/watches", async (c) => {
    const caller = await admitted(deps, c);
    if (!lists.take(caller.accountId)) {
      throw new ApiError(
        429,
        "rate_limited",
        `An account may list its watches ${LISTS_PER_SECOND} times a second; wait and retry.`,
        { ...caller.headers, "Retry-After": "1" },
      );
    }
    const watches = (await listWatches(deps.kv, caller.accountId)).map(watchView);
    // Up to MAX_WATCHES_PER_ACCOUNT watches, about 300 KB with long webhook URLs: paced
    // (core/paced_body.ts), as the data answers are.
    return textWithRequestId(c, JSON.stringify({ count: watches.length, watches }), {
      ...caller.headers,
      "content-type": "application/json",
    });
  });

  app.delete("/v1/watches/:id", async (c) => {
    const caller = await admitted(deps, c);
    const id = pathSegment(c.req.path, 3);
    if (!/^wat_[0-9a-f]{16}$/.test(id) || !await deleteWatch(deps.kv, caller.accountId, id)) {
      throw new ApiError(404, "not_found", "This account has no such watch.", caller.headers);
    }
    return c.json({ id, deleted: true as const }, 200, caller.headers);
  });
}

/** The caller and its meter headers, once admitted as a products call of no credit. */
async function admitted(deps: Deps, c: Context) {
  const req = c.req.raw;
  const caller = await authenticate(deps.accounts, req, queryParams(req.url));
  noteCall(c, { account: caller.accountId });
  const r = await deps.meter.call(caller.accountId, caller.keyId, {
    group: DETAILS_ENDPOINT.group,
    cost: 0,
    valid: true,
  });
  const headers = meterHeaders(r.snapshot, 0, deps.clock.now());
  if (r.outcome !== "admitted") {
    throw refusalError(r.outcome as Exclude<typeof r.outcome, "invalid">, headers);
  }
  return { ...caller, headers };
}

type CreateBody = z.infer<ReturnType<typeof watchCreateBody>>;

async function readBody(
  c: Context,
  minSeconds: number,
): Promise<{ value: CreateBody } | { detail: BodyError[] }> {
  const type = c.req.header("content-type") ?? "";
  let raw: unknown;
  try {
    if (!/^application\/json\b/i.test(type)) throw new SyntaxError();
    raw = await c.req.json();
  } catch {
    return {
      detail: [{
        loc: ["body"],
        msg: "The body must be a JSON object sent as application/json",
        type: "json_invalid",
        input: null,
      }],
    };
  }
  const parsed = watchCreateBody(minSeconds).safeParse(raw);
  if (parsed.success) return { value: parsed.data };
  return {
    detail: reportedIssues(parsed.error.issues).flatMap((i) => bodyErrors(i, raw)).slice(0, 20),
  };
}

/** A zod issue of the body as SPEC.md's 422 entries: pydantic's words, the value given. */
function bodyErrors(issue: z.core.$ZodIssue, raw: unknown): BodyError[] {
  const path = issue.path.map((p) => (typeof p === "number" ? p : String(p)));
  // A field name is the client's too, and is echoed in `loc`: cut like the values.
  const loc = ["body", ...path.map((p) => (typeof p === "string" ? cutString(p) : p))];
  if (issue.code === "unrecognized_keys") {
    const extra = describeIssue(issue as unknown as Record<string, unknown>);
    return issue.keys.map((key) => ({
      loc: [...loc, cutString(key)],
      ...extra,
      input: echoed(valueAt(raw, [...path, key]) ?? null),
    }));
  }
  const input = valueAt(raw, path);
  const words = issue.code === "invalid_type" && input === undefined
    ? MISSING
    : describeIssue(issue as unknown as Record<string, unknown>);
  return [{ loc, ...words, input: echoed(input ?? null) }];
}

/**
 * The value a 422 entry echoes: as sent, but for one nested deeper or holding more than a short
 * list shows, which is echoed as null, and strings cut at MAX_ECHO characters. A body of 10,000
 * nested arrays echoed whole overflowed the stack while the answer was serialized, and answered
 * 503 (probe AF).
 */
function echoed(value: unknown): unknown {
  let nodes = 0;
  const copy = (v: unknown, depth: number): { ok: boolean; v?: unknown } => {
    if (++nodes > 64) return { ok: false };
    if (typeof v === "string") return { ok: true, v: cutString(v) };
    if (v === null || typeof v !== "object") return { ok: true, v };
    if (depth >= 4) return { ok: false };
    const out: Record<string, unknown> | unknown[] = Array.isArray(v) ? [] : {};
    for (const [k, x] of Object.entries(v)) {
      const c = copy(x, depth + 1);
      if (!c.ok) return { ok: false };
      Object.defineProperty(out, cutString(k), { value: c.v, enumerable: true, writable: true });
    }
    return { ok: true, v: out };
  };
  const c = copy(value, 0);
  return c.ok ? c.v : null;
}

const MAX_ECHO = 1_024;

/** At most MAX_ECHO characters, never ending in half of a surrogate pair. */
function cutString(s: string): string {
  if (s.length <= MAX_ECHO) return s;
  const cut = s.slice(0, MAX_ECHO);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

function valueAt(raw: unknown, path: (string | number)[]): unknown {
  let at = raw;
  for (const p of path) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, p)) return undefined;
    at = (at as Record<string | number, unknown>)[p];
  }
  return at;
}

export function watchView(w: Watch): WatchView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: w.id,
    asin: w.asin,
    marketplace: w.marketplace,
    zip: w.zip,
    every_seconds: w.every_seconds,
    webhook_url: w.webhook_url,
    on: w.on,
    status: w.status,
    paused_reason: w.paused_reason,
    created_at: iso(w.created_at)!,
    next_refresh_at: iso(w.next_at)!,
    last_refresh_at: iso(w.last_refresh_at),
    refreshes: w.refreshes,
    last: w.last,
    last_error: w.last_error,
    deliveries: w.deliveries,
  };
}
