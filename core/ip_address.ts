/**
 * IP addresses in text, as numbers: parsed once here for the webhook and mail host rules and the
 * client limits.
 */

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

/** Public unicast: not private, loopback, link-local, shared, documentation, multicast or reserved. */
export function isPublicAddress(address: string): boolean {
  const v4 = parseV4(address);
  if (v4) return isPublicV4(v4);
  const v6 = parseV6(address);
  return v6 ? isPublicV6(v6) : false;
}

function isPublicV4([a, b, c]: number[]): boolean {
  return !(
    a === 0 || a === 10 || a === 127 || a >= 224 || // this network, private, loopback, multicast+
    (a === 100 && b >= 64 && b <= 127) || // shared address space (CGNAT)
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // IETF protocol assignments, TEST-NET-1
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113) // TEST-NET-2/3
  );
}

function isPublicV6(g: number[]): boolean {
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8) || (zeroTo(7) && g[7] === 1)) return false; // :: and ::1
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry
  // an IPv4 address that decides.
  const embedded = v4FromGroups(g[6], g[7]);
  if (zeroTo(5) && (g[5] === 0xffff || g[5] === 0)) return isPublicV4(embedded);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return isPublicV4(embedded);
  }
  // 6to4 (2002::/16) carries its IPv4 address in the next 32 bits; Teredo (2001::/32) hides one.
  if (g[0] === 0x2002) return isPublicV4(v4FromGroups(g[1], g[2]));
  if (g[0] === 0x2001 && g[1] === 0) return false;
  if (g[0] === 0x2001 && g[1] === 0x0db8) return false; // documentation
  if (g[0] === 0x3fff && g[1] < 0x1000) return false; // documentation 3fff::/20
  if (g[0] === 0x2001 && g[1] === 0x0002 && g[2] === 0) return false; // benchmarking 2001:2::/48
  if (g[0] === 0x2001 && g[1] >= 0x10 && g[1] <= 0x2f) return false; // ORCHID(v2) 2001:10::/27
  // Global unicast 2000::/3 only: unique local fc00::/7, link-local fe80::/10, multicast ff00::/8
  // and discard-only 100::/64 lie outside it. Checks of their own for those could never decide
  // (probe GP: the one for 100::/64 could not even be true).
  return (g[0] & 0xe000) === 0x2000;
}
