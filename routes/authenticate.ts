/**
 * Who is calling: the key from `x-api-key`, `Authorization: Bearer`, or (last resort) the
 * `api_key` query parameter, resolved to its account. Missing, malformed and unknown keys all
 * get the same 401; a revoked key gets it too, from the meter, with the same body.
 */
import type { Accounts, KeyLookup } from "../metering/accounts.ts";
import { KEY_PATTERN } from "../metering/api_key.ts";
import { ApiError, UNAUTHORIZED_MESSAGE } from "../core/api_error.ts";
import type { Query } from "./query_params.ts";

export interface Caller {
  accountId: string;
  keyId: string;
}

export function presentedKey(req: Request, query: Query): string | null {
  // A blank x-api-key (a client template with an empty variable) is no key: the next form is read.
  const header = req.headers.get("x-api-key")?.trim();
  if (header) return header;
  const auth = req.headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  // The last value, as for every other parameter (probe BQ: the first was taken).
  return query.get("api_key")?.at(-1) ?? null;
}

/** The caller, at once for a key seen before (see Accounts.lookupKey); throws the 401. */
export function authenticate(
  accounts: Accounts,
  req: Request,
  query: Query,
): Caller | Promise<Caller> {
  const value = presentedKey(req, query);
  if (!value || !KEY_PATTERN.test(value)) throw unauthorized();
  const found = accounts.lookupKey(value);
  return found instanceof Promise ? found.then(callerOf) : callerOf(found);
}

function callerOf(found: KeyLookup | null): Caller {
  if (!found) throw unauthorized();
  return { accountId: found.account_id, keyId: found.key_id };
}

export function unauthorized(): ApiError {
  return new ApiError(401, "unauthorized", UNAUTHORIZED_MESSAGE);
}
