/** What Linux says of a benchmarked process (from /proc): its CPU time and its peak RSS. */

/** User plus system CPU time of `pid` so far, in milliseconds (100 Hz ticks). */
export function cpuMs(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The highest resident set size `pid` has had, in MiB. */
export function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The resident set size of `pid` now, in MiB. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : NaN;
}
