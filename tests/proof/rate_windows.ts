/**
 * Which whole second admitted each call. The server decides at some instant between the moment
 * the client sent the request and the moment its answer came back, so a call's second lies in
 * [floor(sent), floor(done)] of the client's clock (the same machine's clock as the server's).
 * The Date header cannot narrow it: Deno refreshes its cached Date value late, and about one
 * answer in five near a boundary carries the previous second. Most calls fall inside one
 * second; those that straddle a boundary are placed by
 * earliest-deadline-first, which finds a placement with at most `limit` per second whenever one
 * exists. A second that must still hold more than `limit` calls is a proven over-admission.
 */
export interface Admitted {
  sentAt: number;
  doneAt: number;
}

export interface WindowCount {
  second: number;
  /** Calls placed in this second. */
  admitted: number;
  /** Calls that could only have been decided in this second. */
  certain: number;
}

export function perSecond(
  calls: Admitted[],
  limit: number,
): { seconds: WindowCount[]; straddling: number } {
  const spans = calls.map((c) => {
    const lo = Math.floor(c.sentAt / 1000);
    const hi = Math.max(lo, Math.floor(c.doneAt / 1000));
    return { lo, hi };
  });
  if (!spans.length) return { seconds: [], straddling: 0 };
  const first = Math.min(...spans.map((s) => s.lo));
  const last = Math.max(...spans.map((s) => s.hi));
  const waiting = spans.slice().sort((a, b) => a.lo - b.lo);
  const seconds: WindowCount[] = [];
  let open: { lo: number; hi: number }[] = [];
  let next = 0;
  for (let s = first; s <= last; s++) {
    while (next < waiting.length && waiting[next].lo <= s) open.push(waiting[next++]);
    open.sort((a, b) => a.hi - b.hi);
    // Calls that must be in this second go here; then fill up to the limit, soonest deadline first.
    const must = open.filter((c) => c.hi === s).length;
    const take = Math.max(must, Math.min(limit, open.length));
    seconds.push({
      second: s,
      admitted: take,
      certain: open.filter((c) => c.lo === s && c.hi === s).length,
    });
    open = open.slice(take);
  }
  return { seconds, straddling: spans.filter((s) => s.lo !== s.hi).length };
}
