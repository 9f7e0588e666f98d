/** GET /v1/usage: the usage record; free and not rate-counted. */
import type { Hono } from "hono";
import type { Deps } from "./deps.ts";
import { authenticate } from "./authenticate.ts";
import { queryParams } from "./query_params.ts";
import { meterHeaders } from "./meter_headers.ts";
import { refusalError } from "./refusals.ts";
import { noteCall } from "./access_log.ts";

export function usageRoute(app: Hono, deps: Deps): void {
  app.get("/v1/usage", async (c) => {
    const req = c.req.raw;
    const caller = await authenticate(deps.accounts, req, queryParams(req.url));
    noteCall(c, { account: caller.accountId });
    const r = await deps.meter.usage(caller.accountId, caller.keyId);
    const headers = meterHeaders(r.snapshot, 0, deps.clock.now());
    if (r.outcome !== "ok") throw refusalError(r.outcome, headers);
    return Response.json(r.usage, { headers });
  });
}
