/**
 * The operator's log: one JSON object per line on stdout (access lines, upstream failures and
 * retries, lifecycle events). Lines are gathered and written once per event-loop turn, so a busy
 * gateway pays one write for many requests. Tests swap the sink to read the lines.
 *
 * The write is asynchronous, and at most MAX_BACKLOG_BYTES of lines wait for it: past that, lines
 * are dropped and counted, and a `log_dropped` line says how many. A synchronous write made the
 * serving thread wait for whoever reads stdout: a log shipper at 0.6 MB/s took a paying client's
 * p50 from 1.5 ms to 385 ms while another client flooded the log, and one that stops reading
 * would stop the server.
 */
export type LogLine = Record<string, unknown>;

/** Lines waiting for stdout, in bytes of JSON, before further lines are dropped. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

let sink: ((line: LogLine) => void) | null = null;
let pending: string[] = [];
let scheduled = false;
let backlog: string[] = [];
let backlogBytes = 0;
let dropped = 0;
let writing = false;
const encoder = new TextEncoder();

function flush(): void {
  scheduled = false;
  for (const line of pending) {
    if (backlogBytes + line.length + 1 > MAX_BACKLOG_BYTES) {
      dropped++;
      continue;
    }
    backlog.push(line);
    backlogBytes += line.length + 1;
  }
  pending = [];
  if (!writing && (backlog.length || dropped)) void write();
}

/** The backlog as one text, a `log_dropped` line first when lines were dropped since. */
function takeBacklog(): string {
  if (dropped) {
    backlog.unshift(
      JSON.stringify({ ts: new Date().toISOString(), event: "log_dropped", lines: dropped }),
    );
    dropped = 0;
  }
  const text = backlog.join("\n") + "\n";
  backlog = [];
  backlogBytes = 0;
  return text;
}

async function write(): Promise<void> {
  writing = true;
  try {
    while (backlog.length || dropped) {
      let data = encoder.encode(takeBacklog());
      while (data.length) data = data.subarray(await Deno.stdout.write(data));
    }
  } catch {
    backlog = []; // stdout closed: nothing to do but go on serving
    backlogBytes = 0;
  } finally {
    writing = false;
  }
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

/**
 * Writes what is gathered now, synchronously (before exit: an asynchronous write would be cut off
 * by the exit). Lines of a write still under way may follow these.
 */
export function flushOpsLog(): void {
  backlog.push(...pending);
  pending = [];
  if (!backlog.length && !dropped) return;
  let data = encoder.encode(takeBacklog());
  try {
    while (data.length) data = data.subarray(Deno.stdout.writeSync(data));
  } catch { /* stdout closed */ }
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
