/**
 * What every dashboard response and form goes through: security headers (a CSP that allows no
 * inline script except the hashed copy-button script), the session cookie, and the CSRF check
 * on every POST (the session's token, or before sign-in a double-submit cookie token).
 *
 * Cookies are HttpOnly, SameSite=Lax, Path=/dashboard, and Secure whenever the public origin is
 * https (issue 13.9): PUBLIC_URL says so, or, with TRUST_PROXY=1, the proxy's X-Forwarded-Proto,
 * or the connection itself is TLS. The request's Host header, which any client can set, decides
 * nothing. Over plain http (local development, the tests) they cannot be Secure: browsers would
 * drop them.
 */
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import type { Deps } from "../deps.ts";
import { randomHex } from "../../metering/api_key.ts";
import { readSession, type Session, SESSION_MS } from "../../metering/sessions.ts";
import { readCredential } from "../../metering/passwords.ts";
import { DEVICE_MS } from "../../metering/sign_in_devices.ts";
import { COPY_SCRIPT_HASH } from "./layout.tsx";

export const SESSION_COOKIE = "shelf_session";
/** Before sign-in: the CSRF token of the sign-in and sign-up forms, double-submitted. */
export const FORM_COOKIE = "shelf_form";
/** A browser that has signed in before (metering/sign_in_devices.ts); kept across sign-outs. */
export const DEVICE_COOKIE = "shelf_device";
import { CSRF_FIELD_NAME as CSRF_FIELD } from "./names.ts";

const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  `script-src '${COPY_SCRIPT_HASH}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CSP);
    c.header("X-Frame-Options", "DENY");
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
    c.header("Cross-Origin-Opener-Policy", "same-origin");
    c.header("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
    if (!c.res.headers.has("cache-control")) c.header("Cache-Control", "no-store");
  };
}

type CookieDeps = Pick<Deps, "publicUrl" | "trustProxy">;

/** Whether the users' side of this request is https; never read from the Host header. */
export function publicHttps(c: Context, deps: CookieDeps): boolean {
  if (deps.publicUrl.startsWith("https:")) return true;
  if (deps.trustProxy) {
    return (c.req.header("x-forwarded-proto") ?? "").split(",")[0].trim() === "https";
  }
  // The URL as Deno built it, not parsed: a Host the parser refuses made it throw.
  return c.req.url.startsWith("https:");
}

/**
 * The cookies' names and path. Over https they carry the `__Host-` prefix, which a browser only
 * accepts from this very host, Secure, for Path=/ and without a Domain: a sibling subdomain (a
 * user-content host beside the dashboard, say) cannot plant a session or form token of its own
 * choosing (cookie tossing). Plain http (local development, the tests) cannot have Secure cookies,
 * so there they keep the plain names, scoped to /dashboard.
 */
function cookies(c: Context, deps: CookieDeps) {
  return publicHttps(c, deps)
    ? {
      session: `__Host-${SESSION_COOKIE}`,
      form: `__Host-${FORM_COOKIE}`,
      device: `__Host-${DEVICE_COOKIE}`,
      path: "/",
      secure: true,
    }
    : {
      session: SESSION_COOKIE,
      form: FORM_COOKIE,
      device: DEVICE_COOKIE,
      path: "/dashboard",
      secure: false,
    };
}

function cookieOptions(c: Context, deps: CookieDeps, maxAgeSec: number) {
  const { path, secure } = cookies(c, deps);
  return { path, httpOnly: true, secure, sameSite: "Lax" as const, maxAge: maxAgeSec };
}

export function setSessionCookie(c: Context, deps: CookieDeps, token: string): void {
  const { session, form, path, secure } = cookies(c, deps);
  setCookie(c, session, token, cookieOptions(c, deps, SESSION_MS / 1000));
  deleteCookie(c, form, { path, secure });
}

export function clearSessionCookie(c: Context, deps: CookieDeps): void {
  const { session, path, secure } = cookies(c, deps);
  deleteCookie(c, session, { path, secure });
}

/** The browser's device token (metering/sign_in_devices.ts), if it sent one. */
export function deviceCookie(c: Context, deps: CookieDeps): string | undefined {
  return getCookie(c, cookies(c, deps).device);
}

/** Keeps the device token in the browser for as long as the device stays known. */
export function setDeviceCookie(c: Context, deps: CookieDeps, token: string): void {
  setCookie(c, cookies(c, deps).device, token, cookieOptions(c, deps, DEVICE_MS / 1000));
}

/** The form token for a visitor without a session, set as a cookie when missing. */
export function formToken(c: Context, deps: CookieDeps): string {
  const name = cookies(c, deps).form;
  const have = getCookie(c, name);
  if (have && /^[0-9a-f]{32}$/.test(have)) return have;
  const token = randomHex(16);
  setCookie(c, name, token, cookieOptions(c, deps, 3600));
  return token;
}

/** The signed-in session, unless expired or made before the account's last password change. */
export async function currentSession(
  c: Context,
  deps: Deps,
): Promise<{ token: string; session: Session } | null> {
  const token = getCookie(c, cookies(c, deps).session);
  const session = await readSession(deps.kv, token, deps.clock.now());
  if (!session || !token) return null;
  const credential = await readCredential(deps.kv, session.account_id);
  if ((credential?.epoch ?? 0) !== (session.epoch ?? 0)) return null;
  return { token, session };
}

/** The host the form's page was served from: the proxy's X-Forwarded-Host only under TRUST_PROXY. */
function servedHost(c: Context, deps: CookieDeps): string | undefined {
  return (deps.trustProxy ? c.req.header("x-forwarded-host") : undefined) ?? c.req.header("host");
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return new URL(origin).host === host;
  } catch {
    return false; // a malformed Origin is a refusal (403), not a failure (issue 13.10)
  }
}

/** The forms whose pages are rendered with the browser's form token (formToken), signed in or not. */
const PRE_SIGN_IN_FORMS = new Set([
  "/dashboard/signin",
  "/dashboard/signup",
  "/dashboard/verify",
  "/dashboard/forgot",
  "/dashboard/reset",
  "/dashboard/alert-address",
]);

/**
 * Refuses (403) a POST from another origin or without the right CSRF token, and (400) one whose
 * body is no form that can be read (a multipart type without its boundary, say), which the
 * handlers would otherwise meet as an exception.
 */
export function csrfCheck(
  deps: Deps,
  refuse: (c: Context, why: string, status?: 400 | 403) => Response | Promise<Response>,
): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== "POST") return await next();
    // A browser says `Origin: null` for a form another site bounced here through a redirect: a
    // page that could set the form cookie (another port of this host name) signed a visitor into
    // its own account that way (probe AU). Fetch metadata says the same where Origin is missing.
    const origin = c.req.header("origin");
    const site = c.req.header("sec-fetch-site");
    if (
      (origin && !sameOrigin(origin, servedHost(c, deps))) ||
      (site && site !== "same-origin" && site !== "none")
    ) {
      return refuse(c, "The form came from another site.");
    }
    let form: Awaited<ReturnType<typeof c.req.parseBody>>;
    try {
      form = await c.req.parseBody(); // kept by Hono: the handler reads this same parse
    } catch {
      return refuse(c, "The form could not be read. Go back, reload the page and try again.", 400);
    }
    const given = typeof form[CSRF_FIELD] === "string" ? form[CSRF_FIELD] as string : "";
    // The forms a mailed link or a signed-out visitor fills carry the browser's form token even
    // when it is signed in: expecting the session's there refused a signed-in browser's password
    // reset (probe AG). Every other form of a signed-in browser carries its session's.
    const signedIn = PRE_SIGN_IN_FORMS.has(c.req.path) ? null : await currentSession(c, deps);
    const expected = signedIn ? signedIn.session.csrf : getCookie(c, cookies(c, deps).form) ?? "";
    if (!expected || !sameToken(given, expected)) {
      return refuse(
        c,
        "The form's security token is missing or out of date. Go back, reload the page and try again.",
      );
    }
    await next();
  };
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
