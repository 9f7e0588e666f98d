/**
 * The operator's log: one JSON object per line on stdout (access lines, upstream failures and
 * retries, lifecycle events), written by a LineWriter: once per event-loop turn, asynchronously,
 * with a bounded backlog (`log_dropped` says how many lines a slow reader cost). Tests swap the
 * sink to read the lines.
 */
import { LineWriter } from "./line_writer.ts";

export type LogLine = Record<string, unknown>;

let sink: ((line: LogLine) => void) | null = null;
const stdout = new LineWriter(
  Deno.stdout,
  (n) => JSON.stringify({ ts: new Date().toISOString(), event: "log_dropped", lines: n }),
);

export function opsLog(line: LogLine): void {
  const full = { ts: new Date().toISOString(), ...line };
  if (sink) return sink(full);
  stdout.line(JSON.stringify(full));
}

/** Sends every line to `to` instead of stdout (tests); null restores stdout. */
export function setOpsLogSink(to: ((line: LogLine) => void) | null): void {
  sink = to;
}

/**
 * Waits up to `ms` for the lines so far to reach stdout (before exit). Never longer: a reader
 * that stopped reading must not keep a stopping process alive.
 */
export function flushOpsLog(ms = 1_000): Promise<void> {
  return stdout.settle(ms);
}

// The names a client may put a key or the admin token under by mistake (probe AS: the token sent
// as ?access_token= or ?key= was logged in clear).
const SECRET_PARAMS = new Set([
  "api_key",
  "apikey",
  "key",
  "token",
  "access_token",
  "admin_token",
  "auth",
  "authorization",
  "bearer",
  "password",
  "secret",
]);
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
      const name = part.slice(0, eq);
      // A key written percent-encoded (`shelf%5flive%5f…`) is one once decoded (probe BQ).
      return SECRET_PARAMS.has(decodedName(name)) || hasKey(decoded(part.slice(eq + 1)))
        ? `${name}=***`
        : part;
    });
    out = out.slice(0, q + 1) + query.join("&") + out.slice(end);
  }
  const path = q < 0 ? out : out.slice(0, out.indexOf("?"));
  const masked = path.includes("%")
    ? path.split("/").map((seg) => hasKey(decoded(seg)) ? "***" : seg).join("/")
    : path;
  return (masked + out.slice(path.length)).replace(KEY_TEXT, "***");
}

const hasKey = (s: string) => s.search(KEY_TEXT) >= 0;

/** `s` percent-decoded (+ as a space); itself when it holds neither or does not decode. */
function decoded(s: string): string {
  if (!s.includes("%") && !s.includes("+")) return s;
  try {
    return decodeURIComponent(s.replaceAll("+", " "));
  } catch {
    return s;
  }
}

function decodedName(name: string): string {
  return decoded(name).toLowerCase();
}
