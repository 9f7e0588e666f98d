/**
 * The operator's log: one JSON object per line on stdout (access lines, upstream failures and
 * retries, lifecycle events). Lines are gathered and written once per event-loop turn, so a busy
 * gateway pays one write for many requests. Tests swap the sink to read the lines.
 */
export type LogLine = Record<string, unknown>;

let sink: ((line: LogLine) => void) | null = null;
let pending: string[] = [];
let scheduled = false;
const encoder = new TextEncoder();

function flush(): void {
  scheduled = false;
  if (!pending.length) return;
  const text = pending.join("\n") + "\n";
  pending = [];
  let data = encoder.encode(text);
  try {
    while (data.length) data = data.subarray(Deno.stdout.writeSync(data));
  } catch { /* stdout closed: nothing to do but go on serving */ }
}

export function opsLog(line: LogLine): void {
  const full = { ts: new Date().toISOString(), ...line };
  if (sink) return sink(full);
  pending.push(JSON.stringify(full));
  if (pending.length >= 512) return flush();
  if (!scheduled) {
    scheduled = true;
    setTimeout(flush, 0);
  }
}

/** Sends every line to `to` instead of stdout (tests); null restores stdout. */
export function setOpsLogSink(to: ((line: LogLine) => void) | null): void {
  flush();
  sink = to;
}

/** Writes what is gathered now (before exit). */
export function flushOpsLog(): void {
  flush();
}

/** `api_key=…` in a logged path or URL, masked: the query way of sending a key must not leak it. */
export function maskSecrets(pathAndQuery: string): string {
  return pathAndQuery.replace(/([?&](?:api_key|token)=)[^&#]*/gi, "$1***");
}
