/**
 * Bytes to text the way a browser would: a byte-order mark wins, then the charset of the
 * Content-Type header, then a <meta> charset in the first 4 KiB, then UTF-8; but bytes that are
 * valid UTF-8 beyond ASCII are read as UTF-8 whatever is named (see utf8Beyond). Bytes read as UTF-8
 * that are not UTF-8 are read in the charset a <meta> names further down, when one does (a
 * Shift_JIS page whose tag came after 4 KiB was read as a page of U+FFFD; probe CF).
 */
export function decodeHtml(bytes: Uint8Array, contentType?: string | null): string {
  return decodePage(bytes, contentType).text;
}

/** The text, and whether bytes invalid in the charset it was read in became U+FFFD. */
export interface Decoded {
  text: string;
  lossy: boolean;
}

export function decodePage(bytes: Uint8Array, contentType?: string | null): Decoded {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) {
    return decodeAs("utf-16le", bytes.subarray(2));
  }
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    return decodeAs("utf-16be", bytes.subarray(2));
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return decodeAs("utf-8", bytes.subarray(3));
  }
  const declared = charsetOf(contentType ?? "") ?? sniffMetaCharset(bytes, 4096);
  if (declared && !UTF8.test(declared)) return utf8Beyond(bytes) ?? decodeAs(declared, bytes);
  const read = decodeAs("utf-8", bytes);
  if (!read.lossy) return read;
  const later = sniffMetaCharset(bytes, LATE_META_BYTES);
  return later && !UTF8.test(later) ? decodeAs(later, bytes) : read;
}

const UTF8 = /^(?:utf-?8|unicode-1-1-utf-8)$/i;

/**
 * The bytes' text when they hold characters beyond ASCII that read as UTF-8, with at most one
 * invalid sequence for every eight valid ones: then they are UTF-8, whatever charset the page
 * names. A UTF-8 page under a windows-1252 or latin1 label, read as that label, turns every "é"
 * into "Ã©" with no U+FFFD to tell, and was answered so, charged. Text in a legacy charset is not
 * valid UTF-8 by chance beyond a few bytes (each UTF-8 lead byte needs its exact run of
 * continuation bytes), and its other characters beyond ASCII are invalid sequences, so a real
 * legacy page keeps its charset; an all-ASCII page does too (ISO-2022-JP is seven-bit). Valid
 * throughout was asked for once, and one stray byte anywhere (a comment after `</html>`) brought
 * the mojibake back, charged (probe GO). Only pages naming another charset pay for the count.
 */
function utf8Beyond(bytes: Uint8Array): Decoded | undefined {
  const text = new TextDecoder("utf-8").decode(bytes);
  const { good, bad } = beyondAscii(text);
  return good > 0 && bad * 8 <= good ? { text, lossy: bad > 0 } : undefined;
}

/** How far a late <meta> charset is looked for (real pages name theirs in the first KiB). */
const LATE_META_BYTES = 256 * 1024;

/**
 * Whether a lossy reading holds more U+FFFD than a page read in its own charset would, counted
 * against the characters beyond ASCII that it did read: a page in the wrong charset turns most of
 * them into U+FFFD (a windows-1252 page under a UTF-8 header, all of them, however few: probe
 * CG), where a page in its own charset with a few invalid bytes reads hundreds well.
 */
export function garbled(text: string): boolean {
  const { good, bad } = beyondAscii(text);
  return bad > Math.max(8, good / 8);
}

/** The characters beyond ASCII in `text`: read well, and U+FFFD. */
function beyondAscii(text: string): { good: number; bad: number } {
  let bad = 0;
  let good = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c === 0xfffd) bad++;
    else good++;
  }
  return { good, bad };
}

function charsetOf(contentType: string): string | undefined {
  return /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
}

/**
 * The charset a <meta> tag names within the first `within` bytes, read tag by tag: each "<meta"
 * found, then the ">" that ends it, each character looked at once or twice. One pattern over the
 * whole head was retried from every "<meta" to the end, quadratic: 256 KiB of "<meta" took 3-6 s
 * (probe CG).
 */
function sniffMetaCharset(bytes: Uint8Array, within: number): string | undefined {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, within));
  const starts = /<meta/gi;
  for (let m = starts.exec(head); m; m = starts.exec(head)) {
    const end = head.indexOf(">", m.index);
    if (end < 0) return undefined;
    // A "<meta" before this tag's ">" is inside it: the next tag starts after it.
    starts.lastIndex = end + 1;
    if (end - m.index > MAX_META_TAG) continue;
    const named = /charset\s*=\s*["']?([\w.:-]+)/i.exec(head.slice(m.index, end));
    if (!named) continue;
    // A UTF-16 page without a BOM cannot carry an ASCII meta tag; such a declaration is a lie.
    return /^utf-?16/i.test(named[1]) ? undefined : named[1];
  }
  return undefined;
}

/** The longest <meta> tag read for a charset (real ones are under 100 characters). */
const MAX_META_TAG = 1024;

/** Text in `label`, or in UTF-8 when the label is unknown. */
function decodeAs(label: string, bytes: Uint8Array): Decoded {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  const text = decoder.decode(bytes);
  // One scan for U+FFFD costs a 1.5 MB page 0.2 ms, where a strict decode of every page cost
  // 0.4 ms; only a page holding one is decoded strictly, since a page may show U+FFFD itself (a
  // seller's or reviewer's text), which is no sign of a wrong charset.
  return { text, lossy: text.includes("\uFFFD") && !strictlyDecodes(decoder.encoding, bytes) };
}

function strictlyDecodes(encoding: string, bytes: Uint8Array): boolean {
  try {
    new TextDecoder(encoding, { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
