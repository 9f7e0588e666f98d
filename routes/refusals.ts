/** The meter's refusals as the spec's errors. */
import { ApiError } from "../core/api_error.ts";
import { unauthorized } from "./authenticate.ts";
import type { Refusal } from "../metering/meter.ts";

export function refusalError(
  refusal: Exclude<Refusal, "invalid">,
  headers: Record<string, string>,
  /** Credits the account's calls running in this process hold (metering/credits_in_flight.ts). */
  held = 0,
): ApiError {
  switch (refusal) {
    case "unauthorized":
      return unauthorized();
    case "forbidden":
      return new ApiError(
        403,
        "forbidden",
        "This key's subscription is inactive or its plan does not include this endpoint group.",
        headers,
      );
    case "rate_limited":
      return new ApiError(
        429,
        "rate_limited",
        "Too many requests this second for this key; wait and retry.",
        {
          ...headers,
          "Retry-After": "1",
        },
      );
    case "quota_exhausted":
      if (held > 0) {
        return new ApiError(
          429,
          "quota_exhausted",
          `The credits left are held by calls still running (${held}); a call that fails gives ` +
            "its credit back, so retry in a moment.",
          { ...headers, "Retry-After": "1" },
        );
      }
      return new ApiError(
        429,
        "quota_exhausted",
        `The credits of this period are used up; they reset at ${
          headers["x-credits-reset"] ?? "the period's end"
        }.`,
        headers,
      );
  }
}
