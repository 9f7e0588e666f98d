/**
 * A small SMTP client over Deno.connect: EHLO, AUTH PLAIN (or LOGIN) when the URL has a user,
 * MAIL FROM, RCPT TO, DATA, QUIT. `smtp://` is plain TCP, `smtps://` is TLS from the first byte
 * (port 465); STARTTLS is not attempted, so a local relay with a self-signed certificate works.
 * No dependency: the npm clients pull in Node's net/tls shims for a dozen lines of protocol.
 *
 * @example
 * const smtp = parseSmtpUrl("smtp://user:pass@127.0.0.1:2525", "Shelf <alerts@example.com>");
 * await sendMail(smtp, { to: "dev@example.com", subject: "Hello", text: "Body" });
 */
export interface SmtpConfig {
  host: string;
  port: number;
  tls: boolean;
  user: string | null;
  pass: string | null;
  /** The From header; its address (inside <…> if present) is the envelope sender. */
  from: string;
  timeoutMs: number;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** A refused or broken exchange; `code` is the server's reply code, 0 for a network failure. */
export class SmtpError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "SmtpError";
    this.code = code;
  }
}

export function parseSmtpUrl(url: string, from: string | undefined, timeoutMs = 15_000): SmtpConfig {
  const u = new URL(url);
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") {
    throw new TypeError(`Cannot send mail as 'SMTP_URL' must be smtp:// or smtps://: current value is ${u.protocol}`);
  }
  const tls = u.protocol === "smtps:";
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : tls ? 465 : 25,
    tls,
    user: u.username ? decodeURIComponent(u.username) : null,
    pass: u.password ? decodeURIComponent(u.password) : null,
    from: from || `Shelf <shelf@${u.hostname || "localhost"}>`,
    timeoutMs,
  };
}

export async function sendMail(cfg: SmtpConfig, mail: Mail): Promise<void> {
  const conn = cfg.tls
    ? await Deno.connectTls({ hostname: cfg.host, port: cfg.port })
    : await Deno.connect({ hostname: cfg.host, port: cfg.port });
  const s = new Session(conn, cfg.timeoutMs);
  try {
    await s.expect(220);
    const ehlo = await s.command("EHLO shelf.localhost", 250);
    if (cfg.user !== null) await authenticate(s, ehlo, cfg.user, cfg.pass ?? "");
    await s.command(`MAIL FROM:<${envelopeAddress(cfg.from)}>`, 250);
    await s.command(`RCPT TO:<${envelopeAddress(mail.to)}>`, 250, 251);
    await s.command("DATA", 354);
    await s.command(formatMessage(cfg.from, mail), 250);
    await s.command("QUIT", 221).catch(() => {});
  } finally {
    s.close();
  }
}

async function authenticate(s: Session, ehlo: string[], user: string, pass: string) {
  const mechs = ehlo.find((l) => /^AUTH[ =]/i.test(l))?.toUpperCase().split(/[ =]/) ?? [];
  if (mechs.includes("PLAIN") || !mechs.includes("LOGIN")) {
    await s.command(`AUTH PLAIN ${b64(`\0${user}\0${pass}`)}`, 235);
    return;
  }
  await s.command("AUTH LOGIN", 334);
  await s.command(b64(user), 334);
  await s.command(b64(pass), 235);
}

/** The headers and body of a plain-text mail, CRLF line ends, dot-stuffed, ending in CRLF.CRLF. */
export function formatMessage(from: string, mail: Mail, now = new Date()): string {
  const host = envelopeAddress(from).split("@")[1] ?? "localhost";
  const headers = [
    `From: ${from}`,
    `To: ${mail.to}`,
    `Subject: ${headerText(mail.subject)}`,
    `Date: ${now.toUTCString().replace("GMT", "+0000")}`,
    `Message-ID: <${crypto.randomUUID()}@${host}>`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: 8bit",
  ];
  const body = mail.text.replace(/\r?\n/g, "\r\n").split("\r\n").map((l) => (l.startsWith(".") ? "." + l : l));
  return [...headers, "", ...body, "."].join("\r\n");
}

function envelopeAddress(s: string): string {
  const m = /<([^<>\s]+)>/.exec(s);
  const addr = (m ? m[1] : s).trim();
  if (/[\s<>]/.test(addr)) throw new SmtpError(0, `not a mail address: ${addr}`);
  return addr;
}

/** Subjects are ASCII here; anything else is encoded as an RFC 2047 word. */
function headerText(s: string): string {
  const oneLine = s.replace(/[\r\n]+/g, " ");
  return /^[\x20-\x7e]*$/.test(oneLine) ? oneLine : `=?utf-8?B?${b64(oneLine)}?=`;
}

function b64(s: string): string {
  const bytes = new TextEncoder().encode(s);
  return btoa(String.fromCharCode(...bytes));
}

/** Line-oriented replies over one connection, each read bounded by the timeout. */
class Session {
  readonly #conn: Deno.Conn;
  readonly #timeoutMs: number;
  readonly #decoder = new TextDecoder();
  readonly #encoder = new TextEncoder();
  #buffer = "";
  #closed = false;

  constructor(conn: Deno.Conn, timeoutMs: number) {
    this.#conn = conn;
    this.#timeoutMs = timeoutMs;
  }

  async command(line: string, ...ok: number[]): Promise<string[]> {
    await this.#conn.write(this.#encoder.encode(line + "\r\n"));
    return await this.expect(...ok);
  }

  /** Reads one reply (all its lines) and throws unless its code is one of `ok`. */
  async expect(...ok: number[]): Promise<string[]> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.#line();
      const m = /^(\d{3})([ -]?)(.*)$/.exec(line);
      if (!m) throw new SmtpError(0, `unexpected reply: ${line.slice(0, 100)}`);
      lines.push(m[3]);
      if (m[2] !== "-") {
        const code = Number(m[1]);
        if (!ok.includes(code)) throw new SmtpError(code, `${code} ${lines.join(" ")}`.slice(0, 300));
        return lines;
      }
    }
  }

  async #line(): Promise<string> {
    const timer = setTimeout(() => this.close(), this.#timeoutMs);
    try {
      for (;;) {
        const end = this.#buffer.indexOf("\r\n");
        if (end >= 0) {
          const line = this.#buffer.slice(0, end);
          this.#buffer = this.#buffer.slice(end + 2);
          return line;
        }
        const chunk = new Uint8Array(4096);
        const n = this.#closed ? null : await this.#conn.read(chunk).catch(() => null);
        if (n === null) throw new SmtpError(0, "the mail server closed the connection or timed out");
        this.#buffer += this.#decoder.decode(chunk.subarray(0, n), { stream: true });
      }
    } finally {
      clearTimeout(timer);
    }
  }

  close() {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }
}
