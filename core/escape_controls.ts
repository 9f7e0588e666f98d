/**
 * Control characters shown as escapes in a line meant for a terminal or a log reader: a message
 * may quote what others wrote (an argument, a store entry, an error's text), and raw, an ESC
 * sequence in one retitled or cleared the operator's terminal (probe AS), a line feed or carriage
 * return forged a line of its own (probe HI), and U+2028/U+2029 split the line for readers that
 * break lines on them (probe BT).
 */
// deno-lint-ignore no-control-regex -- matching control characters is this module's job
const CONTROLS = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;

export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => {
    const n = c.charCodeAt(0);
    return n > 0xff ? `\\u${n.toString(16)}` : `\\x${n.toString(16).padStart(2, "0")}`;
  });
}
