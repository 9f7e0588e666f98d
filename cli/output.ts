/**
 * The admin CLI's output: every command's JSON on stdout, and a refusal's one line on stderr,
 * written whole on any stream an operator may hand it. What each rule answers:
 * - console.log drops a write to a pipe whose reader has gone without a word, and a new key's
 *   value printed so stayed active, unseen (probe FW): writes here throw, and the caller revokes.
 * - A stream that is full for now is waited on while its reader reads, up to WAIT_MS without
 *   progress: taken for a gone reader, a slow reader's key was revoked (probe FX). Writes are
 *   asynchronous, in chunks, so that the wait can end whether the stream is non-blocking (EAGAIN)
 *   or blocking: a blocking write held the only thread, and a full blocking pipe kept the CLI
 *   alive past every signal and every deadline (probe GC).
 * - From the output on, SIGINT, SIGTERM and SIGHUP only end a wait (HeldSignals): killed while
 *   waiting, or while revoking afterwards, the CLI left the key active and said nothing (probes
 *   GA, GB). The signal that ends the wait for stdout does not end the wait for the last line
 *   (what became of the key): under `2>&1` that line waits on the same full stream, and was lost
 *   at once (probe GC); a further signal gives it up.
 * - The note that the CLI is waiting is given once, and may be lost: stderr may be the same full
 *   stream (probe GB).
 */
const WAIT_MS = 60_000;
/** Below a pipe's buffer, so that each chunk written is progress a reader made. */
const CHUNK = 16 * 1024;
/** How long a write may pend before the operator is told the CLI waits for a reader. */
const NOTE_AFTER_MS = 1_000;
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const encoder = new TextEncoder();

/** Signals caught from now to the exit: they end a wait for a reader, and nothing else. */
export class HeldSignals {
  caught: string | null = null;
  /** How many were caught: a wait gives up on one caught after it began. */
  count = 0;
  constructor() {
    for (const sig of SIGNALS) {
      Deno.addSignalListener(sig, () => {
        this.caught ??= sig;
        this.count++;
      });
    }
  }
}

interface Writer {
  write(p: Uint8Array): Promise<number>;
}

/**
 * All of `text` on `stream`, or a throw: the stream refused it, its reader stopped reading, or a
 * signal came. A write given up on may still be pending; the CLI exits soon after.
 */
async function writeAll(
  stream: Writer,
  text: string,
  held?: HeldSignals,
  onWait?: () => void,
): Promise<void> {
  const bytes = encoder.encode(text);
  const signalsBefore = held?.count ?? 0;
  let giveUpAt = Date.now() + WAIT_MS;
  let noteAt = Date.now() + NOTE_AFTER_MS;
  const waiting = () => {
    if (held && held.count > signalsBefore) {
      throw new Error(`${held.caught} while the reader was not reading`);
    }
    if (Date.now() > giveUpAt) throw new Error("the reader read nothing for a minute");
    if (Date.now() > noteAt) {
      noteAt = Infinity;
      onWait?.();
    }
  };
  for (let done = 0; done < bytes.length;) {
    const written = stream.write(bytes.subarray(done, done + CHUNK)).then(
      (n) => ({ n }),
      (error: unknown) => ({ error }),
    );
    let outcome: { n: number } | { error: unknown } | undefined;
    while (!(outcome = await Promise.race([written, tick()]))) waiting();
    if ("n" in outcome && outcome.n > 0) {
      done += outcome.n;
      giveUpAt = Date.now() + WAIT_MS;
      continue;
    }
    if ("error" in outcome && !(outcome.error instanceof Deno.errors.WouldBlock)) {
      throw outcome.error;
    }
    // A non-blocking stream, full for now (EAGAIN, or nothing taken).
    noteAt = Math.min(noteAt, Date.now());
    waiting();
    await tick();
  }
}

function tick(): Promise<undefined> {
  return new Promise((r) => setTimeout(() => r(undefined), 10));
}

/** A command's JSON on stdout, whole, or a throw (see the module's rules). */
export async function printOut(text: string, held: HeldSignals): Promise<void> {
  await writeAll(Deno.stdout, text, held, () => {
    // A note only: stderr may be the same full stream, and it is not waited for.
    Deno.stderr.write(encoder.encode("admin: waiting for stdout's reader (Ctrl-C gives up)\n"))
      .catch(() => {});
  });
}

/**
 * A line on stderr, waited for as stdout is (until a signal caught after it began); never a
 * throw: there is nowhere left to say it.
 */
export async function printErr(line: string, held?: HeldSignals): Promise<void> {
  try {
    await writeAll(Deno.stderr, `${line}\n`, held);
  } catch { /* nowhere left to say it */ }
}
