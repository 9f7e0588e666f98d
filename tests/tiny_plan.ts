/**
 * The built-in plans and `tiny`: two credits of products calls and one key, so that a second
 * call uses the allowance up (crossing both usage-alert thresholds); its rate as the test needs.
 */
import { BUILTIN_PLANS, Plans } from "../metering/plans.ts";

export function withTinyPlan(ratePerSec: number): Plans {
  return new Plans([...BUILTIN_PLANS, {
    id: "tiny",
    credits: 2,
    rate_limit_per_sec: ratePerSec,
    max_keys: 1,
    groups: ["products"],
  }]);
}
