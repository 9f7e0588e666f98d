/**
 * Bytes to text the way a browser would: a byte-order mark wins, then the charset of the
 * Content-Type header, then a <meta> charset in the first 4 KiB, then UTF-8.
 */
export function decodeHtml(bytes: Uint8Array, contentType?: string | null): string {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) {
    return decodeAs("utf-16le", bytes.subarray(2));
  }
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    return decodeAs("utf-16be", bytes.subarray(2));
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return decodeAs("utf-8", bytes.subarray(3));
  }
  const declared = charsetOf(contentType ?? "") ?? sniffMetaCharset(bytes);
  return decodeAs(declared ?? "utf-8", bytes);
}

function charsetOf(contentType: string): string | undefined {
  return /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
}

function sniffMetaCharset(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 4096));
  const m = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head);
  if (!m) return undefined;
  // A UTF-16 page without a BOM cannot carry an ASCII meta tag; such a declaration is a lie.
  return /^utf-?16/i.test(m[1]) ? undefined : m[1];
}

function decodeAs(label: string, bytes: Uint8Array): string {
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}
