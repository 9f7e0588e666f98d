/**
 * A tick each minute from the platform's scheduler (Deno.cron), which wakes the watch loops even
 * when no request keeps an instance busy; their own timers do the rest. Deno Deploy takes only
 * crons registered at the top level of a module while it is first evaluated, not inside a
 * function, a conditional or after the server starts: main.ts registered this one after start-up,
 * inside a condition, so on Deploy it never ran and idle instances let refreshes wait for the next
 * request (probe FY). This module registers it when main.ts imports it, before anything else runs;
 * the loops sign up for the tick once they exist. `cron` is among deno.json's unstable features,
 * so the same call runs here (a local tick that only wakes the loops sooner).
 */
const wakers: (() => void)[] = [];

/** Runs `wake` at every tick from now on. */
export function onCronTick(wake: () => void): void {
  wakers.push(wake);
}

Deno.cron("shelf watches", "* * * * *", () => {
  for (const wake of wakers) wake();
});
