/**
 * The cookies of one marketplace session, as a browser keeps them for one site: set by
 * `Set-Cookie`, removed when a cookie expires, sent back on every request of the session.
 * Domain and path are not tracked: a jar only ever serves one marketplace host.
 */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Adds the cookies of a `Cookie:` header value (operator-supplied sessions). */
  seed(cookieHeader: string): void {
    for (const part of cookieHeader.split(";")) {
      const eq = part.indexOf("=");
      if (eq > 0) this.cookies.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
  }

  store(headers: Headers, now = Date.now()): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      if (isExpired(attrs, now)) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

function isExpired(attrs: string[], now: number): boolean {
  for (const a of attrs) {
    const [k, v = ""] = a.split("=", 2).map((s) => s.trim());
    if (/^max-age$/i.test(k) && Number(v) <= 0) return true;
    if (/^expires$/i.test(k) && Date.parse(a.slice(a.indexOf("=") + 1).trim()) < now) return true;
  }
  return false;
}
