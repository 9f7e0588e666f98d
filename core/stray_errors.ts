/**
 * The last guard against "crashed by one request". Deno, like Node, ends the process when a
 * promise is rejected with no handler, or when a timer or event callback throws: one such slip in
 * a request's path (a mutation round showed a dropped `await` doing it) would let any client stop
 * the service, cutting every call in flight with its credits still charged and skipping the drain.
 * Once the service is up, such an error is counted, written as one error line (its message only,
 * masked like every error line, and at most one line per interval, since a client may repeat it),
 * and the process goes on. Start-up failures are not caught: they still end with exit code 1.
 */
import { type Log, throttledError } from "./log.ts";

/** Installs the guard; the function returned removes it (tests). */
export function keepServingPast(
  log: Log,
  counted: () => void,
  intervalMs = 10_000,
): () => void {
  const report = throttledError(
    log,
    "an error escaped every handler (a bug; the process went on)",
    intervalMs,
  );
  // Nothing here may throw: an error thrown by an "error" listener ends the process after all.
  const guarded = (what: unknown) => {
    try {
      counted();
      report(what);
    } catch { /* the count or the line is lost, not the process */ }
  };
  const rejected = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    guarded(e.reason);
  };
  const thrown = (e: ErrorEvent) => {
    e.preventDefault();
    guarded(e.error ?? e.message);
  };
  globalThis.addEventListener("unhandledrejection", rejected);
  globalThis.addEventListener("error", thrown);
  return () => {
    globalThis.removeEventListener("unhandledrejection", rejected);
    globalThis.removeEventListener("error", thrown);
  };
}
