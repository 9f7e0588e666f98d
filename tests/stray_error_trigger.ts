/**
 * Preloaded into a spawned Shelf (tests/ops_stray_errors_test.ts): on SIGUSR2 it makes the two
 * slips core/stray_errors.ts guards against, a timer callback that throws (a symbol) and a promise
 * rejected with no handler, each holding a key and the admin token the log must not show.
 */
const token = Deno.env.get("ADMIN_TOKEN") ?? "";
const key = `shelf_live_${"ab12".repeat(12)}`;
Deno.addSignalListener("SIGUSR2", () => {
  // A symbol first, which JSON cannot write (probe HI: logging it threw inside the guard).
  setTimeout(() => {
    throw Symbol(`stray throw/${key}/${token}`);
  }, 0);
  setTimeout(() => Promise.reject(new Error(`stray rejection/${key}/${token}`)), 20);
});
