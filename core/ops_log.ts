/**
 * The operator's log: one JSON object per line on stdout (access lines, upstream failures and
 * retries, lifecycle events), written by a LineWriter: once per event-loop turn, asynchronously,
 * with a bounded backlog (`log_dropped` says how many lines a slow reader cost). Tests swap the
 * sink to read the lines.
 */
import { LineWriter } from "./line_writer.ts";
import { withoutUserInfo } from "./redact_url.ts";

export type LogLine = Record<string, unknown>;

let sink: ((line: LogLine) => void) | null = null;
const stdout = new LineWriter(
  Deno.stdout,
  (n) => JSON.stringify({ ts: new Date().toISOString(), event: "log_dropped", lines: n }),
);

/** The operator's secrets (the admin token), masked in every line wherever they appear. */
let secrets: string[] = [];

export function setLoggedSecrets(values: string[]): void {
  secrets = values.filter((v) => v.length >= 8);
}

/**
 * `text` with keys and the operator's secrets masked (maskSecrets): for log text that may quote
 * what a client sent, such as an upstream URL built from its query (probe CR: a key searched for
 * was logged in clear by every retry line, where the access line masked it).
 */
export function maskedText(text: string): string {
  // A URL's user info (a proxy's or a store's password), as Deno's fetch errors quote URLs whole.
  return withoutUserInfo(maskSecrets(text, secrets), "***@");
}

/**
 * A line of plain text among the log's lines (the start-up line), written the same way: a stdout
 * that refuses writes (a log file on a full disk) costs the line, never the service (probe HH:
 * written with console.log, ENOSPC ended a server that was already listening).
 */
export function plainLine(text: string): void {
  stdout.line(text);
}

export function opsLog(line: LogLine): void {
  // Access lines (no `event`) are masked where they are made (routes/access_log.ts).
  const shown = line.event === undefined ? line : Object.fromEntries(
    Object.entries(line).map(([k, v]) => [k, typeof v === "string" ? maskedText(v) : v]),
  );
  const full = { ts: new Date().toISOString(), ...shown };
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
 * and must be masked like it. Anything shaped like a key is masked wherever it is: in a path
 * segment, a parameter's name or value, a parameter without "=", after a "#", written literally
 * or percent-encoded, once or more (probes BQ, BU).
 */
export function maskSecrets(pathAndQuery: string, secrets: string[] = []): string {
  // The shortest text that can hold a key's digits or a secret, found once for every part.
  const least = Math.min(48, ...secrets.map((v) => Math.min(v.length, PART_OF_SECRET)));
  const holdsKey = (s: string) => s.length >= least && holdsSecret(s, secrets);
  const q = pathAndQuery.indexOf("?");
  const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
  // A segment is looked at when it may be escaped, or long enough to be a piece of a secret.
  const maskedPath = path.includes("%") || path.length > least
    ? path.split("/").map((seg) => holdsKey(seg) ? "***" : seg).join("/")
    : path;
  let rest = "";
  if (q >= 0) {
    // A "#" ends the query for the parser, but a client may send one: what follows is logged too.
    rest = "?" + pathAndQuery.slice(q + 1).split(/([&#])/).map((part) => {
      if (part === "&" || part === "#") return part;
      const eq = part.indexOf("=");
      const name = eq < 0 ? part : part.slice(0, eq);
      if (holdsKey(name)) return "***";
      if (eq < 0) return part;
      return SECRET_PARAMS.has(decodedName(name)) || holdsKey(part.slice(eq + 1))
        ? `${name}=***`
        : part;
    }).join("");
  }
  // The operator's secrets first: a hex token (`openssl rand -hex 32`) is a run of 48 digits and
  // more, and masked as one first it was no longer whole, so its last digits were logged (probe CM).
  return secrets.reduce((out, v) => out.replaceAll(v, "***"), maskedPath + rest)
    .replace(KEY_TEXT, "***").replace(HEX_RUN, "***");
}

/**
 * A key's 48 digits whatever is written before them: `%u005F`, an overlong or full-width
 * underscore, or "+" kept the prefix from matching and all 48 were logged (probe BW).
 */
const HEX_RUN = /[0-9a-f]{48}/gi;

/**
 * Whether `s`, percent-decoded as often as it was encoded (up to three times), holds a key, its
 * 48 digits, or one of `secrets` (the admin token).
 */
function holdsSecret(s: string, secrets: string[]): boolean {
  let t = s;
  for (let i = 0; i < 3 && /%[0-7][0-9a-f]|\+/i.test(t); i++) t = asciiDecoded(t);
  // Spaces, controls and zero-width characters inside a key's digits kept them from forming one
  // run, and all 48 were logged (probe BY).
  const joined = t.replace(
    // deno-lint-ignore no-control-regex
    /[\s\u0000-\u001f\u007f\u200b-\u200d\u2060\ufeff]+|(?:%[89a-f][0-9a-f])+/gi,
    "",
  );
  // The secrets are looked for in the joined text too: a newline or a space inside the admin
  // token kept it whole in the log (probe DI).
  return joined.search(HEX_RUN) >= 0 ||
    secrets.some((v) =>
      [t, joined].some((u) => u.includes(v) || (u.length >= PART_OF_SECRET && v.includes(u)))
    );
}

/**
 * The length from which a part that is a piece of a secret is masked: a token pasted one character
 * short was logged with one character left to guess (probe DG).
 */
const PART_OF_SECRET = 16;

/**
 * `s` with its ASCII escapes (%00-%7F) decoded and + as a space: what a key or a parameter name
 * is written in. Linear and never throws: decodeURIComponent took 3 µs to throw on each `%`, and
 * a 16 KB path of them held the serving thread 17-20 ms a request (probe BU).
 */
function asciiDecoded(s: string): string {
  return s.replaceAll("+", " ").replace(
    /%([0-7][0-9a-f])/gi,
    (_, hex: string) => String.fromCharCode(parseInt(hex, 16)),
  );
}

/** A parameter's name as the query parser reads it, lower-cased ("" past any secret name's length). */
function decodedName(name: string): string {
  if (name.length > 40) return "";
  return (name.includes("%") || name.includes("+") ? asciiDecoded(name) : name).toLowerCase();
}
