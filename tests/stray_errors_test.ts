/**
 * The guard of core/stray_errors.ts in one process: what reaches the log of each kind of error
 * that escaped every handler (tests/ops_stray_errors_test.ts runs it in a real server).
 */
import assert from "node:assert/strict";
import { keepServingPast } from "../core/stray_errors.ts";

Deno.test("keepServingPast: a rejection's reason and a thrown error reach the log, each counted; a log that throws loses only its line", () => {
  const logged: unknown[] = [];
  let counted = 0;
  const events = () => [
    new PromiseRejectionEvent("unhandledrejection", {
      promise: Promise.resolve(),
      reason: new Error("the reason"),
      cancelable: true,
    }),
    new ErrorEvent("error", {
      error: new Error("the throw"),
      message: "the throw",
      cancelable: true,
    }),
  ];
  const remove = keepServingPast({ error: (_m, d) => void logged.push(d) }, () => counted++, 0);
  try {
    for (const e of events()) {
      globalThis.dispatchEvent(e);
      assert.ok(
        e.defaultPrevented,
        `${e.type}: the runtime's own handling (the exit) is prevented`,
      );
    }
  } finally {
    remove();
  }
  assert.equal(counted, 2);
  assert.deepEqual(logged.map((d) => (d as Error).message), ["the reason", "the throw"]);

  const removeThrowing = keepServingPast(
    {
      error: () => {
        throw new Error("the log failed");
      },
    },
    () => counted++,
    0,
  );
  try {
    for (const e of events()) globalThis.dispatchEvent(e);
  } finally {
    removeThrowing();
  }
  assert.equal(counted, 4);
});
