/**
 * The cookies of one marketplace session, kept as RFC 6265 says a browser keeps them: each with
 * its domain (host-only or a domain cookie), path, Secure flag and expiry, sent back only to
 * requests they match. On top of the RFC, a jar never accepts or sends a cookie outside a
 * marketplace's registrable domain (amazon.co.uk, not co.uk): a Domain attribute naming a
 * public suffix or another site is ignored, and a request to any other host gets no cookies.
 */
import { marketplaceForHost, plainHost } from "../schemas/marketplaces.ts";
import { sessionPath } from "./session_paths.ts";

interface Cookie {
  name: string;
  value: string;
  /** Lower case, without a leading dot. */
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
  /** Milliseconds since the epoch; Infinity for a session cookie. */
  expires: number;
}

/** `www.amazon.co.uk` → `amazon.co.uk`; undefined for a host that is no marketplace's. */
function registrableDomain(host: string): string | undefined {
  return marketplaceForHost(host)?.host.slice(4);
}

/** RFC 6265 5.1.3, for host names (IP literals never reach a jar: they are not marketplace hosts). */
function domainMatches(host: string, domain: string): boolean {
  return host === domain || host.endsWith("." + domain);
}

/** RFC 6265 5.1.4. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

/** RFC 6265 5.1.4: the directory of the request path. */
function defaultPath(requestPath: string): string {
  if (!requestPath.startsWith("/")) return "/";
  const last = requestPath.lastIndexOf("/");
  return last <= 0 ? "/" : requestPath.slice(0, last);
}

export class CookieJar {
  private readonly cookies = new Map<string, Cookie>();

  /** Names of the operator's session cookies: sent only to session paths (session_paths.ts). */
  private readonly operatorNames = new Set<string>();
  /** The marketplace host the operator's session was seeded for, the only one that renews it. */
  private operatorHost: string | undefined;

  /** A jar holding what this one holds now, whose later changes stay its own. */
  copy(): CookieJar {
    const jar = new CookieJar();
    for (const [k, c] of this.cookies) jar.cookies.set(k, { ...c });
    for (const name of this.operatorNames) jar.operatorNames.add(name);
    jar.operatorHost = this.operatorHost;
    return jar;
  }

  /**
   * Adds the cookies of a `Cookie:` header value (an operator's signed-in session) as cookies of
   * the marketplace's domain (amazon.de) and path "/", https only: so the marketplace renews them
   * as it sets them (`Domain=.amazon.de; Path=/`), each replacing its seeded one. Seeded host-only,
   * a renewal went beside it and every request sent both, the stale value first, which a server
   * reading the first took (probe DH). Cookies of these names, whether seeded or set by
   * the marketplace later (it renews its session cookies), go only to requests for the pages Shelf
   * reads (`sessionPath`): any other request is made as a visitor who is not signed in.
   */
  seed(cookieHeader: string, marketplaceHost: string): void {
    const host = plainHost(marketplaceHost);
    const domain = registrableDomain(host);
    if (!domain) return;
    this.operatorHost = host;
    for (const part of cookieHeader.split(";")) {
      const eq = part.indexOf("=");
      if (eq <= 0) continue;
      const name = part.slice(0, eq).trim();
      this.operatorNames.add(name);
      this.put({
        name,
        value: part.slice(eq + 1).trim(),
        domain,
        hostOnly: false,
        path: "/",
        secure: true,
        expires: Infinity,
      });
    }
  }

  /**
   * Whether a request to `url` carries the operator's session (see seed): one of its cookies, as
   * seeded or renewed. Configured was not enough: once the marketplace had expired them, reviews
   * read signed out were answered `authenticated: true`, and cached so for every account (probe
   * DH).
   */
  signedIn(url: URL, now = Date.now()): boolean {
    if (this.operatorNames.size === 0 || !sessionPath(url.pathname)) return false;
    // The sign-in cookies when the operator's header names any (`at-main`, `sess-at-acbuk`, …):
    // a marketplace that signs a session out keeps its `session-id`, and a header pasted whole
    // from a browser holds it, so the session counted as signed in for good (probe EH).
    const auth = [...this.operatorNames].some(isSignInCookie);
    return this.matching(url, now).some((c) =>
      this.operatorNames.has(c.name) && (!auth || isSignInCookie(c.name))
    );
  }

  /**
   * Takes the `Set-Cookie` fields of a response to `requestUrl` (RFC 6265 5.2 and 5.3). A response
   * to a request made signed out while the jar holds the operator's session is not taken: a
   * marketplace answers a visitor with a fresh anonymous session, and a sign-out page clears the
   * session cookies, so one scrape of such a page replaced or signed out the operator's session
   * for every client.
   */
  store(headers: Headers, requestUrl: URL, now = Date.now()): void {
    if (this.operatorNames.size > 0 && !sessionPath(requestUrl.pathname)) return;
    const host = plainHost(requestUrl.hostname);
    const site = registrableDomain(host);
    if (!site) return;
    for (const line of headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const cookie: Cookie = {
        name: pair.slice(0, eq).trim(),
        value: pair.slice(eq + 1).trim(),
        domain: host,
        hostOnly: true,
        path: defaultPath(requestUrl.pathname),
        secure: false,
        expires: Infinity,
      };
      let maxAge: number | undefined;
      let rejected = false;
      for (const attr of attrs) {
        const at = attr.indexOf("=");
        const key = (at < 0 ? attr : attr.slice(0, at)).trim().toLowerCase();
        const value = at < 0 ? "" : attr.slice(at + 1).trim();
        // RFC 6265bis 5.6: an attribute value over 1,024 bytes is ignored. Kept, a 380 KB Path
        // (stored twice, in the cookie and its key) let 60 cookies hold 45 MiB a session (probe AL).
        if (value.length > MAX_ATTRIBUTE) continue;
        if (key === "domain" && value) {
          const domain = plainHost(value.replace(/^\./, ""));
          // Another site, or a public suffix wider than the marketplace's own domain.
          if (!domainMatches(host, domain) || !domainMatches(domain, site)) rejected = true;
          cookie.domain = domain;
          cookie.hostOnly = false;
        } else if (key === "path" && value.startsWith("/")) {
          cookie.path = value;
        } else if (key === "secure") {
          cookie.secure = true;
        } else if (key === "max-age" && /^-?\d+$/.test(value)) {
          maxAge = Number(value);
        } else if (key === "expires") {
          const t = Date.parse(value);
          if (!Number.isNaN(t)) cookie.expires = t;
        }
      }
      if (rejected) continue;
      if (this.operatorNames.has(cookie.name)) {
        // Only the marketplace host renews or ends the operator's session: a cookie of its name
        // from the bare domain (amazon.de), set host-only, took the seeded one's place and was
        // never sent to www, the session broken for every client (probe DI). From the host, one
        // for the whole site stands alone, whether set host-only or for the domain.
        if (host !== this.operatorHost) continue;
        if (cookie.path === "/") {
          for (const [key, c] of this.cookies) {
            if (c.name === cookie.name && c.path === "/") this.cookies.delete(key);
          }
        }
      }
      if (maxAge !== undefined) cookie.expires = maxAge <= 0 ? -Infinity : now + maxAge * 1000;
      if (cookie.expires <= now) this.cookies.delete(keyOf(cookie));
      else this.put(cookie, now);
    }
  }

  /** What the jar's cookies take, as kept (each key repeats name, domain and path). */
  get bytes(): number {
    let bytes = 0;
    for (const c of this.cookies.values()) bytes += sizeOf(c);
    return bytes;
  }

  /** The value of the cookie `name` that a request to `url` would send, if any. */
  get(name: string, url?: URL, now = Date.now()): string | undefined {
    return this.matching(url, now).find((c) => c.name === name)?.value;
  }

  /** The `Cookie:` value for a request to `url` (RFC 6265 5.4); "" for a host outside the jar's site. */
  header(url: URL, now = Date.now()): string {
    return this.matching(url, now).map((c) => `${c.name}=${c.value}`).join("; ");
  }

  private matching(url: URL | undefined, now: number): Cookie[] {
    const all = [...this.cookies.values()].filter((c) => c.expires > now);
    if (!url) return all;
    const host = plainHost(url.hostname);
    if (!registrableDomain(host)) return [];
    const session = sessionPath(url.pathname);
    return all
      .filter((c) =>
        (session || !this.operatorNames.has(c.name)) &&
        (c.hostOnly ? host === c.domain : domainMatches(host, c.domain)) &&
        pathMatches(url.pathname || "/", c.path) &&
        (!c.secure || url.protocol === "https:")
      )
      .sort((a, b) => b.path.length - a.path.length);
  }

  /**
   * Whether `c` is the operator's session, which eviction spares: a cookie of one of its names
   * for the whole site (path "/"), as seeded and as the marketplace renews it, at most a few per
   * name. Any cookie of such a name was spared, so a marketplace setting `session-id` on ever new
   * paths grew the jar without bound (27,000 cookies, every call 10 times slower; probe AP).
   */
  #operators(c: Cookie): boolean {
    return c.path === "/" && this.operatorNames.has(c.name);
  }

  /**
   * Keeps the cookie, as the newest; past MAX_COOKIES, or MAX_JAR_BYTES in all (everything a
   * cookie takes: name, value, domain, path), the expired ones go, then the oldest ones the
   * marketplace set (never one of the operator's session). A cookie over MAX_COOKIE_BYTES is not
   * kept.
   */
  private put(c: Cookie, now = Date.now()): void {
    if (sizeOf(c) > MAX_COOKIE_BYTES) return;
    const key = keyOf(c);
    this.cookies.delete(key);
    this.cookies.set(key, c);
    let bytes = this.bytes;
    if (this.cookies.size <= MAX_COOKIES && bytes <= MAX_JAR_BYTES) return;
    for (const [k, old] of this.cookies) {
      if (old.expires > now) continue;
      this.cookies.delete(k);
      bytes -= sizeOf(old);
    }
    for (const [k, old] of this.cookies) {
      if (this.cookies.size <= MAX_COOKIES && bytes <= MAX_JAR_BYTES) return;
      if (this.#operators(old) || old === c) continue;
      this.cookies.delete(k);
      bytes -= sizeOf(old);
    }
  }
}

// Browsers keep at least 50 cookies of 4,096 bytes per domain (RFC 6265 6.1); Amazon sets about
// 15, a few KB in all. Without bounds, pages that set cookies without end would grow the session
// until every request's Cookie header is too large for the marketplace to take (a 400, for every
// caller of the marketplace).
const MAX_COOKIES = 60;
const MAX_COOKIE_BYTES = 4_096;
export const MAX_JAR_BYTES = 8_192;
const MAX_ATTRIBUTE = 1_024;

function keyOf(c: Cookie): string {
  return `${c.name}\u0000${c.domain}\u0000${c.path}`;
}

/** A cookie as kept: its fields, and its key, which repeats name, domain and path. */
function sizeOf(c: Cookie): number {
  return 2 * (c.name.length + c.domain.length + c.path.length) + c.value.length + 2;
}

/** Amazon's sign-in cookies, per marketplace: `at-main`, `sess-at-main`, `at-acbde`, … */
function isSignInCookie(name: string): boolean {
  return /^(?:sess-)?at-/.test(name);
}
