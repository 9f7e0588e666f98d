/** IP addresses in text, as numbers: parsed once here for the webhook rules and client limits. */

/** Four bytes of a dotted IPv4 address, or null. */
export function parseV4(s: string): number[] | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

/** The four bytes an IPv6 address carries in two 16-bit groups (mapped, NAT64, 6to4 forms). */
export function v4FromGroups(high: number, low: number): number[] {
  return [high >> 8, high & 255, low >> 8, low & 255];
}

/** The eight 16-bit groups of an IPv6 address, or null; "::" and a dotted IPv4 tail are read. */
export function parseV6(s: string): number[] | null {
  let text = s.split("%")[0];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = parseV4(tail[1]);
    if (!v4) return null;
    text = text.slice(0, -tail[1].length) +
      `${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h ? h.split(":") : []);
  const head = groups(halves[0]), rest = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  const out = all.map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
  return out.every((n) => !Number.isNaN(n)) ? out : null;
}
