import { LineWriter } from "./line_writer.ts";
import { maskedText } from "./ops_log.ts";
import { escapeControls } from "./escape_controls.ts";

/** Where unexpected failures are reported; tests pass a collecting one. */
export interface Log {
  error(message: string, detail?: unknown): void;
}

// Written like the ops log (line_writer.ts): under systemd stderr is the same pipe as stdout, and
// a flood of errors any client can cause (mail refused past its limit) stopped the server when
// the reader stalled.
const stderr = new LineWriter(Deno.stderr, (n) => `[shelf] ${n} error lines dropped`);

/** Characters of an error's detail written to stderr. */
export const MAX_DETAIL = 1_024;

/** stderr, with only an error's message: stacks and request details may carry secrets. */
export const consoleLog: Log = {
  error(message, detail) {
    const what = detail instanceof Error ? detail.message : detail ?? "";
    let text: string;
    try {
      // JSON.stringify gives undefined for a symbol or a function: what a callback may throw.
      text = typeof what === "string" ? what : JSON.stringify(what) ?? shown(what);
    } catch {
      text = shown(what);
    }
    // A detail may quote what a client sent: it is masked as the ops log's lines are, before a
    // line is cut (as the ops log cuts a path), so that no cut secret escapes its pattern.
    text = maskedText(text.slice(0, 4 * MAX_DETAIL));
    if (text.length > MAX_DETAIL) text = `${text.slice(0, MAX_DETAIL)}… (cut)`;
    stderr.line(escapeControls(`[shelf] ${maskedText(message)} ${text}`.trimEnd()));
  },
};

/** String(value), or a placeholder for a value whose conversion throws (a hostile toString). */
function shown(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "(a value that cannot be shown)";
  }
}

/** Waits up to `ms` for the error lines so far to reach stderr (before exit). */
export function flushErrorLog(ms = 1_000): Promise<void> {
  return stderr.settle(ms);
}

/**
 * An error line any client can cause, written at most once per `ms` (the first at once), the next
 * saying how many were left out: a mail refused past its hourly limit wrote a line a request,
 * 64,000 lines from one burst of forms (probe Z).
 */
export function throttledError(
  log: Log,
  message: string,
  ms = 60_000,
): (detail?: unknown) => void {
  let last = -Infinity;
  let skipped = 0;
  return (detail) => {
    const now = Date.now();
    if (now - last < ms) {
      skipped++;
      return;
    }
    log.error(
      skipped ? `${message} (and ${skipped} more since the last such line)` : message,
      detail,
    );
    last = now;
    skipped = 0;
  };
}
