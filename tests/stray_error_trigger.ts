/**
 * Preloaded into a spawned Shelf (tests/ops_stray_errors_test.ts): on SIGUSR2 it makes the two
 * slips core/stray_errors.ts guards against, a promise rejected with no handler and a timer
 * callback that throws, each message holding a key and the admin token the log must not show.
 */
const token = Deno.env.get("ADMIN_TOKEN") ?? "";
const key = `shelf_live_${"ab12".repeat(12)}`;
Deno.addSignalListener("SIGUSR2", () => {
  Promise.reject(new Error(`stray rejection/${key}/${token}`));
  setTimeout(() => {
    throw new Error(`stray throw/${key}/${token}`);
  }, 0);
});
