import assert from "node:assert/strict";
import { dayOf } from "../metering/account_state.ts";

Deno.test("dayOf() names the UTC day, also when calls cross midnight back and forth", () => {
  const midnight = Date.UTC(2026, 10, 22);
  assert.equal(dayOf(midnight - 1), "2026-11-21");
  assert.equal(dayOf(midnight), "2026-11-22");
  assert.equal(dayOf(midnight - 1), "2026-11-21");
  assert.equal(dayOf(midnight + 86_399_999), "2026-11-22");
  assert.equal(dayOf(Date.UTC(2024, 1, 29, 23, 59)), "2024-02-29");
});
