/**
 * Sending mail by SMTP through nodemailer (issue 13.8): it bounds every stage of an exchange
 * (connect, greeting, each reply) with a timeout, and a whole message gets one overall deadline
 * here, so a mail server that accepts and then stalls, or never greets, or streams an endless
 * reply, can hold the alert sender for at most `timeoutMs`. `smtp://` is plain TCP (AUTH PLAIN
 * or LOGIN when the URL has a user), `smtps://` is TLS from the first byte (port 465); STARTTLS
 * is not attempted, so a local relay with a self-signed certificate works.
 *
 * @example
 * const smtp = parseSmtpUrl("smtp://user:pass@127.0.0.1:2525", "Shelf <alerts@example.com>");
 * await sendMail(smtp, { to: "dev@example.com", subject: "Hello", text: "Body" });
 */
import { mailableEmail, normalizeEmail } from "../metering/accounts.ts";
import { type MailResolver, privateMailHost, systemResolver } from "./mail_host.ts";
import nodemailer from "nodemailer";
import { within } from "../core/within.ts";

export interface SmtpConfig {
  host: string;
  port: number;
  tls: boolean;
  user: string | null;
  pass: string | null;
  /** The From header; its address (inside <…> if present) is the envelope sender. */
  from: string;
  /** Connect, greeting, each reply, and the whole message: none may take longer. */
  timeoutMs: number;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** A refused or broken exchange; `code` is the server's reply code, 0 for a network failure or a timeout. */
export class SmtpError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "SmtpError";
    this.code = code;
  }
}

/**
 * Errors name SMTP_URL and what is wrong, never the value: it holds the mail password. Only
 * `smtp://` and `smtps://` URLs that name a host are taken (`smtp:host` has none: nodemailer would
 * quietly use localhost).
 */
export function parseSmtpUrl(
  url: string,
  from: string | undefined,
  timeoutMs = 15_000,
): SmtpConfig {
  const refuse = (why: string) =>
    new TypeError(`'SMTP_URL' must be smtp://user:pass@host:port or smtps://…: ${why}`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw refuse("the value is not a URL (not shown: it may hold a password)");
  }
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") {
    throw refuse("its scheme is neither smtp nor smtps");
  }
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (!host || !url.slice(u.protocol.length).startsWith("//")) {
    throw refuse("it names no host");
  }
  if (u.port === "0") throw refuse("port 0 is not a port a mail server listens on");
  const decode = (part: string, what: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw refuse(`its ${what} has a malformed %-escape`);
    }
  };
  if (from !== undefined && !senderAddress(from)) {
    throw new TypeError(
      `'SMTP_FROM' must be an address (shelf@example.com) or a name and one (Shelf <shelf@example.com>)`,
    );
  }
  const tls = u.protocol === "smtps:";
  return {
    host,
    port: u.port ? Number(u.port) : tls ? 465 : 25,
    tls,
    user: u.username ? decode(u.username, "user name") : null,
    pass: u.password ? decode(u.password, "password") : null,
    from: from || `Shelf <shelf@${u.hostname || "localhost"}>`,
    timeoutMs,
  };
}

/**
 * The address of SMTP_FROM, written as `address` or `Name <address>` (a name without quotes, angle
 * brackets or control characters), or null: nodemailer sends a junk value as no From header and an
 * empty envelope sender, which relays refuse or mark as spam.
 */
function senderAddress(from: string): string | null {
  // deno-lint-ignore no-control-regex -- a name with a control character is refused
  const m = /^\s*(?:([^<>"\x00-\x1f\x7f]*?)\s*<([^<>\s]+)>|([^<>\s]+))\s*$/.exec(from);
  return m ? normalizeEmail(m[2] ?? m[3]) : null;
}

/**
 * Why a mail to an address accounts may no longer be given is not sent: one off the public
 * internet, or one earlier versions stored in a form sign-up now refuses (non-ASCII, `jörg@bücher.de`).
 */
export const NOT_MAILABLE =
  "not sent: the address is not one Shelf mails (a plain ASCII address on a host of the public internet)";

/** A mail refused before any server was asked: its address is not one Shelf mails. */
export class NotMailable extends SmtpError {
  constructor() {
    super(0, NOT_MAILABLE);
  }
}

export async function sendMail(
  cfg: SmtpConfig,
  mail: Mail,
  resolver: MailResolver = systemResolver,
): Promise<void> {
  // Accounts and alert addresses are mailable when stored (metering/accounts.ts), but earlier
  // versions stored root@localhost and the like: such mail never reaches the relay (probe EV),
  // nor mail whose domain's mail hosts resolve off the public internet (mail_host.ts).
  const to = mailableEmail(mail.to);
  if (!to || await privateMailHost(to.slice(to.lastIndexOf("@") + 1), resolver)) {
    throw new NotMailable();
  }
  // One transport per message: alert mail is rare, and no pooled socket can be left half dead.
  const transport = nodemailer.createTransport({
    host: cfg.host,
    port: cfg.port,
    secure: cfg.tls,
    ignoreTLS: !cfg.tls,
    auth: cfg.user ? { user: cfg.user, pass: cfg.pass ?? "" } : undefined,
    connectionTimeout: cfg.timeoutMs,
    greetingTimeout: cfg.timeoutMs,
    socketTimeout: cfg.timeoutMs,
    dnsTimeout: cfg.timeoutMs,
  });
  try {
    await within(
      transport.sendMail({ from: cfg.from, to: mail.to, subject: mail.subject, text: mail.text }),
      cfg.timeoutMs,
      () => new SmtpError(0, `no answer from the mail server within ${cfg.timeoutMs} ms`),
    );
  } catch (e) {
    if (e instanceof SmtpError) throw e;
    const err = e as { responseCode?: number; message?: string };
    throw new SmtpError(err.responseCode ?? 0, (err.message ?? String(e)).split("\n")[0]);
  } finally {
    transport.close();
  }
}
