/**
 * The metered data endpoints: authenticate, admit and charge (one batched commit), validate,
 * ask the data source, check the answer against the endpoint's schema. A call that fails after
 * its charge is refunded, so no failed call costs a credit. A call whose client hung up before
 * its answer was ready is logged as 499 and stays charged for the upstream work done at its
 * request: refunded, hanging up got every page for nothing (1,345 upstream requests in 10 s for
 * 0 credits). A search stops taking further pages then, so it pays for what it had fetched.
 */
import type { Context, Hono } from "hono";
import { noteCall, textWithRequestId } from "./access_log.ts";
import type { Deps } from "./deps.ts";
import type { Endpoint } from "../schemas/endpoints.ts";
import { ApiError } from "../core/api_error.ts";
import { authenticate } from "./authenticate.ts";
import { meterHeaders } from "./meter_headers.ts";
import { refusalError } from "./refusals.ts";
import { heldCredits } from "../metering/credits_in_flight.ts";
import { CallCharges } from "./call_charges.ts";
import { storeRefusal } from "./store_refusal.ts";
import { validateQuery } from "./validate_query.ts";
import { queryParams } from "./query_params.ts";
import type { Snapshot } from "../metering/meter.ts";
import { cachedAge } from "../upstream/result_cache.ts";
import { checkedAnswer } from "../upstream/checked_answer.ts";

export function dataRoutes(app: Hono, deps: Deps, endpoints: readonly Endpoint[]): void {
  for (const ep of endpoints) app.get(ep.path, (c) => handle(deps, ep, c));
}

async function handle(deps: Deps, ep: Endpoint, c: Context): Promise<Response> {
  const req = c.req.raw;
  // The request's signal tells of a hang-up only if it exists before it (see watchHangUp).
  let hungUp: AbortSignal | null = null;
  const gone = () => hungUp?.aborted === true;
  const query = queryParams(req.url);
  const caller = await authenticate(deps.accounts, req, query);
  noteCall(c, { account: caller.accountId });
  const input = validateQuery(ep.params, query);
  const admitted = await deps.meter.call(caller.accountId, caller.keyId, {
    group: ep.group,
    cost: ep.cost,
    valid: input.ok,
    endpoint: ep.path,
  });
  const tag = { keyId: caller.keyId, endpoint: ep.path };
  let snapshot = admitted.snapshot;
  const headers = () => meterHeaders(snapshot, 0, deps.clock.now());
  // The meter's refusals (401, 403, 429) come before validation: a revoked key or a throttled
  // client answered 422 for bad parameters would learn what a valid one would be told.
  if (admitted.outcome !== "admitted" && admitted.outcome !== "invalid") {
    throw refusalError(admitted.outcome, headers(), heldCredits(caller.accountId));
  }
  if (admitted.outcome === "invalid" || !input.ok) {
    const detail = input.ok ? [] : input.detail;
    return Response.json({ detail }, { status: 422, headers: headers() });
  }

  const charges = new CallCharges(
    deps.meter,
    caller.accountId,
    tag,
    (m, e) => deps.log.error(m, e),
  );
  charges.add(admitted.snapshot!, admitted.charged);
  try {
    try {
      const body = await deps.dataSource.fetch({
        endpoint: ep,
        params: input.value,
        signal: deps.stopping,
        owner: caller.accountId,
        watchHangUp: () => void (hungUp ??= req.signal),
        chargePage: async () => {
          if (gone()) return false;
          const r = await deps.meter.charge(caller.accountId, 1, tag, ep.group);
          if (r.ok) {
            charges.add(r.snapshot!, 1);
            snapshot = r.snapshot;
          }
          return r.ok;
        },
        // Pages of a search that were paid for and failed: the call costs the pages it fetched.
        refundPages: async (n) => {
          await charges.refundLast(n);
          snapshot = charges.after ?? snapshot;
        },
      });
      const { json } = checkedAnswer(ep, body, (m, e) => deps.log.error(m, e));
      const charged = charges.total;
      const headers = meterHeaders(
        await current(deps, caller, snapshot),
        charged,
        deps.clock.now(),
      );
      noteCall(c, { credits: charged });
      deps.metrics.creditsCharged.inc(charged);
      // Nobody reads it: the status is for the access log and the metrics (nginx's 499).
      if (gone()) return new Response(null, { status: 499, headers });
      const age = cachedAge(body);
      if (age !== undefined) headers["age"] = String(age);
      return textWithRequestId(c, json, headers);
    } catch (e) {
      // What the headers say is left counts only the refunds that landed; the call's cost is 0
      // all the same, as one put off lands later (Meter.refundSurely).
      await charges.refundAll();
      const refunded = await current(deps, caller, charges.after ?? snapshot);
      const err = deps.stopping.aborted
        ? new ApiError(503, "unavailable", "The server is shutting down; retry in a moment.", {
          "Retry-After": "1",
        })
        : e instanceof ApiError
        ? e
        : storeRefusal(e, deps) ?? unexpected(deps, e);
      err.headers = { ...err.headers, ...meterHeaders(refunded, 0, deps.clock.now()) };
      throw err;
    }
  } finally {
    charges.end();
  }
}

/**
 * What an answer tells of the account: `s`, or once its period has ended (a call admitted in the
 * last moments of one), the account as it is now. The admission's figures told a reset already past
 * and credits of a period that was over (probe DC).
 */
async function current(
  deps: Deps,
  caller: { accountId: string; keyId: string },
  s: Snapshot | null,
): Promise<Snapshot | null> {
  if (!s || s.periodEnd > deps.clock.now()) return s;
  try {
    return (await deps.meter.usage(caller.accountId, caller.keyId)).snapshot ?? s;
  } catch {
    return s; // a store that will not answer now leaves the admission's figures
  }
}

function unexpected(deps: Deps, e: unknown): ApiError {
  deps.log.error("data source failed unexpectedly", e);
  return new ApiError(502, "upstream_error", "The upstream request failed.");
}
