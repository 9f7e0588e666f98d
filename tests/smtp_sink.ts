/**
 * A real SMTP server for tests (npm smtp-server) on loopback: requires AUTH (PLAIN or LOGIN) over
 * plain TCP, keeps every accepted message, and refuses recipients with 451 while `failing`.
 */
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  raw: string;
}

export interface SmtpSink {
  url: string;
  received: ReceivedMail[];
  failing: boolean;
  /** Attempts refused while failing. */
  refused: number;
  [Symbol.asyncDispose](): Promise<void>;
}

export const SMTP_USER = "shelf";
export const SMTP_PASS = "mail-secret";

export async function startSmtpSink(): Promise<SmtpSink> {
  const sink = { received: [] as ReceivedMail[], failing: false, refused: 0 };
  const server = new SMTPServer({
    authMethods: ["PLAIN", "LOGIN"],
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASS) cb(null, { user: SMTP_USER });
      else cb(new Error("Invalid username or password"));
    },
    onRcptTo(_addr, _session, cb) {
      if (!sink.failing) return cb();
      sink.refused++;
      const err = new Error("try again later") as Error & { responseCode: number };
      err.responseCode = 451;
      cb(err);
    },
    onData(stream, session, cb) {
      (async () => {
        const chunks: Uint8Array[] = [];
        for await (const c of stream) chunks.push(c);
        const raw = new TextDecoder().decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
        sink.received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: /^Subject: (.*)$/m.exec(raw)?.[1]?.trim() ?? "",
          raw,
        });
        cb();
      })().catch(cb);
    },
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(
      0,
      "127.0.0.1",
      () => resolve((server.server.address() as { port: number }).port),
    );
  });
  return Object.assign(sink, {
    url: `smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:${port}`,
    async [Symbol.asyncDispose]() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** Waits until `cond` holds (polling), or fails after `ms` with `what`. */
export async function eventually(
  what: string,
  cond: () => boolean | Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
