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

const SECRET_PARAMS = new Set(["api_key", "token"]);
// The shape of an API key (metering/api_key.ts), wherever it appears in a logged line.
const KEY_TEXT = /shelf_(?:live|test)_[0-9a-f]{48}/gi;

/**
 * A logged path or URL with the values of `api_key` and `token` masked, however the parameter's
 * name is written: the query parser decodes names, so `api%5Fkey=` authenticates like `api_key=`
 * and must be masked like it. Anything shaped like a key is masked wherever it is.
 */
export function maskSecrets(pathAndQuery: string): string {
  const q = pathAndQuery.indexOf("?");
  let out = pathAndQuery;
  if (q >= 0) {
    const fragment = out.indexOf("#", q);
    const end = fragment < 0 ? out.length : fragment;
    const query = out.slice(q + 1, end).split("&").map((part) => {
      const eq = part.indexOf("=");
      if (eq < 0) return part;
      return SECRET_PARAMS.has(decodedName(part.slice(0, eq))) ? `${part.slice(0, eq)}=***` : part;
    });
    out = out.slice(0, q + 1) + query.join("&") + out.slice(end);
  }
  return out.replace(KEY_TEXT, "***");
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " ")).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}
