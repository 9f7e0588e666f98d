/**
 * The store's refusals as the spec's errors: an account record too contended to commit is a 503
 * `busy`, a store that will not take writes (or whose lock another process held when a commit
 * that does not wait its turns was made) a 503 `unavailable` (logged and counted), both with
 * Retry-After. The app's error handler and a data call that met one mid-call (a search's page
 * charge) answer them alike: the call's own catch used to take them for an upstream failure
 * (probe CJ: a 502 "The upstream request failed." while another process held the store).
 */
import { ApiError } from "../core/api_error.ts";
import { StoreWriteFailed, TooMuchContention } from "../metering/transact.ts";
import type { Deps } from "./deps.ts";
import { isLockedError } from "../core/commit_turns.ts";

/** The error to answer for `e`, or null when it is no refusal of the store. */
export function storeRefusal(e: unknown, deps: Pick<Deps, "log" | "metrics">): ApiError | null {
  if (e instanceof TooMuchContention) {
    return new ApiError(503, "busy", "The account is busy; retry in a moment.", {
      "Retry-After": "1",
    });
  }
  // A commit elsewhere than the meter and the watches, which wait their turns, that met another
  // process's lock: answered like the meter's refusal, not as an unexplained failure.
  if (e instanceof StoreWriteFailed || isLockedError(e)) {
    deps.log.error("store write failed", (e as Error).message);
    deps.metrics.storeWriteRefusals.inc();
    return new ApiError(503, "unavailable", "The store cannot be written; retry shortly.", {
      "Retry-After": "1",
    });
  }
  return null;
}
