/**
 * Text to Shift_JIS and windows-1252 bytes, for tests of pages in the wrong charset: the runtime
 * decodes them but has no encoder, so the tables are read off its decoders.
 */
let table: Map<string, number[]> | undefined;

function codes(): Map<string, number[]> {
  if (table) return table;
  table = new Map();
  const decoder = new TextDecoder("shift_jis");
  for (let lead = 0x81; lead <= 0xfc; lead++) {
    if (lead > 0x9f && lead < 0xe0) continue;
    for (let trail = 0x40; trail <= 0xfc; trail++) {
      if (trail === 0x7f) continue;
      const ch = decoder.decode(new Uint8Array([lead, trail]));
      if (ch.length === 1 && ch !== "\uFFFD" && !table.has(ch)) table.set(ch, [lead, trail]);
    }
  }
  return table;
}

/** Shift_JIS bytes of `text`; a character it cannot encode becomes "?". */
export function shiftJis(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80) out.push(c);
    else out.push(...(codes().get(ch) ?? [0x3f]));
  }
  return new Uint8Array(out);
}

/** windows-1252 bytes of `text`; a character it cannot encode becomes "?". */
export function windows1252(text: string): Uint8Array {
  const high = new Map<string, number>();
  const decoder = new TextDecoder("windows-1252");
  for (let b = 0x80; b <= 0xff; b++) high.set(decoder.decode(new Uint8Array([b])), b);
  const out: number[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    out.push(c < 0x80 ? c : high.get(ch) ?? 0x3f);
  }
  return new Uint8Array(out);
}
