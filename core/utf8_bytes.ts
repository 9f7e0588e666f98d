/**
 * The bytes a string takes in UTF-8, as TextEncoder writes it, counted without encoding it: the
 * answer size check and the log backlog both bound bytes, and text of a three-byte script counted
 * as characters passed them three times over (probes FZ, ID).
 */

/** `s`'s UTF-8 size, or any number above `stopAbove` once the count passes it. */
export function utf8Bytes(s: string, stopAbove = Infinity): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      // A surrogate pair is one four-byte character; a lone surrogate is written as U+FFFD.
      if (next >= 0xdc00 && next < 0xe000) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
    if (n > stopAbove) return n;
  }
  return n;
}
