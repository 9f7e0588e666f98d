/**
 * Page workers run at a lower scheduling priority than the serving thread (nice +10 on Linux):
 * on a box whose cores the workers keep busy, the thread that answers cached hits, meters every
 * call and does upstream I/O gets a core first (Linux's scheduler weighs nice 10 at a tenth).
 */
import { setPriority } from "node:os";

const WORKER_NICE = 10;
const SELF = "/proc/thread-self";

/** Lowers the calling thread's priority where the platform lets it; elsewhere does nothing. */
export function lowerThisThreadsPriority(): void {
  // Asked first, so that a run without these permissions never prompts for them.
  const granted = (d: Deno.PermissionDescriptor) =>
    Deno.permissions.querySync(d).state === "granted";
  if (!granted({ name: "sys", kind: "setPriority" }) || !granted({ name: "read", path: SELF })) {
    return;
  }
  try {
    // Linux names the calling thread "<pid>/task/<tid>"; setpriority on a tid moves that thread.
    const tid = Number(Deno.readLinkSync(SELF).split("/").pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, WORKER_NICE);
  } catch {
    // No /proc (not Linux): the workers keep the default priority.
  }
}
