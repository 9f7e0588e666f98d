/**
 * The cookie jar of a marketplace session, at the edges of its rules: RFC 6265's domain and path
 * matching, default path, expiry and ordering (5.1.3, 5.1.4, 5.2, 5.3, 5.4), and the bounds that
 * keep a session's Cookie header sendable (60 cookies, 4,096 bytes each, 8 KiB in all, 1,024-byte
 * attributes). Each rule here was left unpinned by the suite: a jar that sent a cookie to the
 * wrong path, or kept one past its expiry, still passed. On top of the RFC, the operator's
 * signed-in session (`seed`) must survive: a page answered signed out may not sign it out, only
 * its own host renews it, eviction never takes it, and `signedIn` says the truth about it.
 * Through the jar's public methods only, with explicit clocks.
 */
import assert from "node:assert/strict";
import { CookieJar } from "../upstream/cookie_jar.ts";

const WWW = "https://www.amazon.com";
const PAGE = new URL(`${WWW}/dp/B07H57DNVV`);
// A fixed instant, well after any Expires date a test writes relative to it.
const T = Date.parse("Wed, 01 Jan 2031 00:00:00 GMT");
const T_HTTP = "Wed, 01 Jan 2031 00:00:00 GMT";

/** Takes `Set-Cookie` lines as the answer to a request for `url`, at `now`. */
function store(jar: CookieJar, url: string | URL, lines: string[], now?: number): void {
  const h = new Headers();
  for (const line of lines) h.append("set-cookie", line);
  jar.store(h, new URL(url), now);
}

/** The cookies a request would carry, in the order sent. */
function sent(jar: CookieJar, url: string | URL = PAGE, now?: number): string[] {
  return jar.header(new URL(url), now).split("; ").filter(Boolean);
}

Deno.test("a Domain attribute is matched on a dot boundary: www.amazon.com may not set a cookie for w.amazon.com", () => {
  const jar = new CookieJar();
  store(jar, PAGE, ["frag=1; Domain=w.amazon.com; Path=/", "site=1; Domain=amazon.com; Path=/"]);
  assert.deepEqual(sent(jar), ["site=1"]);
});

Deno.test("a cookie is sent only under its path, and the longest paths go first (RFC 6265 5.1.4, 5.4)", () => {
  const jar = new CookieJar();
  store(jar, `${WWW}/gp/special/x`, ["slash=1; Path=/gp/special/"]);
  store(jar, PAGE, ["root=1; Path=/", "dp=1; Path=/dp"]);
  // A path ending in "/" matches what lies under it, never a path elsewhere.
  assert.deepEqual(sent(jar, `${WWW}/gp/special/y`), ["slash=1", "root=1"]);
  assert.deepEqual(sent(jar), ["dp=1", "root=1"]);
});

Deno.test("the default path of a cookie set from a one-segment path is /, so a Path=/ cookie of its name replaces it", () => {
  const jar = new CookieJar();
  store(jar, `${WWW}/gp`, ["a=1"]);
  store(jar, `${WWW}/gp`, ["a=2; Path=/"]);
  assert.deepEqual(sent(jar), ["a=2"]);
});

Deno.test("a Path attribute that does not start with / is ignored: the default path applies", () => {
  const jar = new CookieJar();
  store(jar, PAGE, ["r=1; Path=dp"]);
  assert.deepEqual(sent(jar, `${WWW}/dp/B000000002`), ["r=1"], "default path /dp");
  assert.deepEqual(sent(jar, `${WWW}/s?k=x`), []);
});

Deno.test("an attribute of exactly 1,024 characters is taken; only a longer one is ignored", () => {
  const jar = new CookieJar();
  const path = "/" + "p".repeat(1_023);
  store(jar, PAGE, [`long=1; Path=${path}`]);
  assert.deepEqual(sent(jar), [], "sent outside its path");
  assert.deepEqual(sent(jar, `${WWW}${path}`), ["long=1"]);
});

Deno.test("Max-Age counts seconds", () => {
  const jar = new CookieJar();
  store(jar, PAGE, ["m=1; Path=/; Max-Age=10"], 1_000);
  assert.deepEqual(sent(jar, PAGE, 5_000), ["m=1"]);
  assert.deepEqual(sent(jar, PAGE, 10_999), ["m=1"]);
  assert.deepEqual(sent(jar, PAGE, 12_000), []);
});

Deno.test("a cookie is not sent from the very millisecond it expires", () => {
  const jar = new CookieJar();
  store(jar, PAGE, [`e=1; Path=/; Expires=${T_HTTP}`], T - 10);
  assert.deepEqual(sent(jar, PAGE, T - 1), ["e=1"]);
  assert.deepEqual(sent(jar, PAGE, T), []);
});

Deno.test("a cookie set with an Expires of now removes its namesake and is not kept", () => {
  const jar = new CookieJar();
  store(jar, PAGE, ["e=1; Path=/"], T - 10);
  store(jar, PAGE, [`e=1; Path=/; Expires=${T_HTTP}`], T);
  assert.deepEqual(sent(jar, PAGE, T), []);
  assert.equal(jar.bytes, 0, "nothing kept");
});

Deno.test("a cookie's bytes count its name, domain and path twice: they are in its key as well", () => {
  const jar = new CookieJar();
  store(jar, PAGE, ["a=1; Path=/"]);
  assert.equal(jar.bytes, 2 * ("a".length + "www.amazon.com".length + "/".length) + "1".length + 2);
});

Deno.test("a cookie of exactly 4,096 bytes as kept is kept; one byte more and it is not", () => {
  const jar = new CookieJar();
  // Name "v", domain www.amazon.com, path "/": 2 × 16 + value + 2 bytes.
  const value = "x".repeat(4_096 - 2 * (1 + 14 + 1) - 2);
  store(jar, PAGE, [`v=${value}; Path=/`, `w=${value}x; Path=/`]);
  assert.deepEqual(sent(jar), [`v=${value}`]);
  assert.equal(jar.bytes, 4_096);
});

Deno.test("at most 60 cookies are kept, however small: the newest ones", () => {
  const jar = new CookieJar();
  store(jar, PAGE, Array.from({ length: 100 }, (_, i) => `c${i}=1; Path=/`));
  const cookies = sent(jar);
  assert.equal(cookies.length, 60);
  assert.ok(cookies.includes("c99=1") && cookies.includes("c40=1"));
  assert.ok(!cookies.includes("c39=1"));
});

Deno.test("a cookie set again counts as the newest: eviction takes the oldest untouched one", () => {
  const jar = new CookieJar();
  store(jar, PAGE, Array.from({ length: 60 }, (_, i) => `a${i}=1; Path=/`));
  store(jar, PAGE, ["a0=2; Path=/"]);
  store(jar, PAGE, ["b=1; Path=/"]);
  const cookies = sent(jar);
  assert.ok(cookies.includes("a0=2"), "the renewed cookie was evicted");
  assert.ok(!cookies.includes("a1=1"), "the oldest untouched cookie stayed");
  assert.ok(cookies.includes("b=1"));
});

Deno.test("past 60 cookies, one expiring this very millisecond goes before any live one", () => {
  const jar = new CookieJar();
  store(jar, PAGE, ["live0=1; Path=/"], T - 10);
  store(jar, PAGE, [`brief=1; Path=/; Expires=${T_HTTP}`], T - 10);
  store(jar, PAGE, Array.from({ length: 59 }, (_, i) => `n${i}=1; Path=/`), T);
  const cookies = sent(jar, PAGE, T);
  assert.ok(cookies.includes("live0=1"), "a live cookie was evicted while an expired one stayed");
  assert.equal(cookies.length, 60);
});

Deno.test("a new cookie is kept when only the operator's session could make room for it, and the session stays", () => {
  const jar = new CookieJar();
  jar.seed(`at-main=${"a".repeat(4_000)}; sess-at-main=${"b".repeat(4_000)}`, "www.amazon.com");
  store(jar, PAGE, [`fresh=${"f".repeat(300)}; Path=/`]);
  const names = sent(jar).map((c) => c.split("=")[0]);
  assert.deepEqual(names.sort(), ["at-main", "fresh", "sess-at-main"]);
});

Deno.test("with the operator's session held, an answer to a page Shelf does not read changes no cookie", () => {
  const jar = new CookieJar();
  jar.seed("session-id=OP; at-main=A", "www.amazon.com");
  // A client's scrape of the sign-out page: fetched signed out, its answer ends the session.
  store(jar, `${WWW}/gp/flex/sign-out.html`, [
    "at-main=; Domain=.amazon.com; Path=/; Max-Age=0",
    "session-id=ANON; Domain=.amazon.com; Path=/",
    "extra=1; Path=/",
  ]);
  assert.deepEqual(sent(jar), ["session-id=OP", "at-main=A"]);
  assert.equal(jar.signedIn(PAGE), true);
});

Deno.test("a session whose only sign-in cookie is sess-at-* is signed in only while that cookie lives", () => {
  const jar = new CookieJar();
  jar.seed("session-id=S; sess-at-main=T", "www.amazon.com");
  assert.equal(jar.signedIn(PAGE), true);
  store(jar, PAGE, ["sess-at-main=; Domain=.amazon.com; Path=/; Max-Age=0"]);
  assert.deepEqual(sent(jar), ["session-id=S"]);
  assert.equal(jar.signedIn(PAGE), false, "session-id alone is no sign-in");
});

Deno.test("a domain-wide renewal of the operator's cookie replaces an earlier host-only renewal", () => {
  const jar = new CookieJar();
  jar.seed("session-id=OP", "www.amazon.de");
  const de = "https://www.amazon.de/dp/B07H57DNVV";
  store(jar, de, ["session-id=R1; Path=/"]);
  assert.deepEqual(sent(jar, de), ["session-id=R1"]);
  store(jar, de, ["session-id=R2; Domain=.amazon.de; Path=/"]);
  assert.deepEqual(sent(jar, de), ["session-id=R2"], "the stale renewal went out beside it");
});

Deno.test("a copied jar still takes the operator's renewal from the marketplace host, and the original keeps its own", () => {
  const jar = new CookieJar();
  jar.seed("session-id=OP", "www.amazon.de");
  const copy = jar.copy();
  const de = "https://www.amazon.de/dp/B07H57DNVV";
  store(copy, de, ["session-id=NEW; Path=/"]);
  assert.deepEqual(sent(copy, de), ["session-id=NEW"]);
  assert.deepEqual(sent(jar, de), ["session-id=OP"]);
});
