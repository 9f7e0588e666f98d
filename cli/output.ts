/**
 * The admin CLI's output: every command's JSON on stdout, and a refusal's one line on stderr,
 * written whole on any stream an operator may hand it. What each rule answers:
 * - console.log drops a write to a pipe whose reader has gone without a word, and a new key's
 *   value printed so stayed active, unseen (probe FW): writes here throw, and the caller revokes.
 * - A non-blocking stream that is only full for now (EAGAIN) is waited on while its reader reads,
 *   up to WAIT_MS without progress: taken for a gone reader, a slow reader's key was revoked
 *   (probe FX).
 * - From the output on, SIGINT, SIGTERM and SIGHUP only end that wait (HeldSignals): killed while
 *   waiting, or while revoking afterwards, the CLI left the key active and said nothing (probes
 *   GA, GB).
 * - Under `2>&1` stderr is the same non-blocking file: the note that the CLI is waiting is given
 *   once and may be lost, and the last line waits for the reader like the output (probe GB: the
 *   note's failure ended the wait at once, and the error line was lost too).
 */
const WAIT_MS = 60_000;
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const encoder = new TextEncoder();

/** Signals caught from now to the exit: they end a wait for a reader, and nothing else. */
export class HeldSignals {
  caught: string | null = null;
  constructor() {
    for (const sig of SIGNALS) Deno.addSignalListener(sig, () => void (this.caught ??= sig));
  }
}

interface SyncWriter {
  writeSync(p: Uint8Array): number;
}

/** All of `text` on `stream`, or a throw: the stream refused it, or its reader stopped reading. */
async function writeAll(
  stream: SyncWriter,
  text: string,
  held?: HeldSignals,
  onWait?: () => void,
): Promise<void> {
  const bytes = encoder.encode(text);
  let giveUpAt = Date.now() + WAIT_MS;
  let waited = false;
  for (let done = 0; done < bytes.length;) {
    try {
      const n = stream.writeSync(bytes.subarray(done));
      done += n;
      if (n > 0) giveUpAt = Date.now() + WAIT_MS;
    } catch (e) {
      if (!(e instanceof Deno.errors.WouldBlock) || Date.now() > giveUpAt) throw e;
      if (!waited) {
        waited = true;
        onWait?.();
      }
      await new Promise((r) => setTimeout(r, 10));
      if (held?.caught) throw new Error(`${held.caught} while the reader was not reading`);
    }
  }
}

/** A command's JSON on stdout, whole, or a throw (see the module's rules). */
export async function printOut(text: string, held: HeldSignals): Promise<void> {
  await writeAll(Deno.stdout, text, held, () => {
    try {
      Deno.stderr.writeSync(
        encoder.encode("admin: waiting for stdout's reader (Ctrl-C gives up)\n"),
      );
    } catch { /* a note only: stderr may be the same full stream */ }
  });
}

/**
 * A line on stderr, waited for as stdout is (but not once a signal was caught); never a throw:
 * there is nowhere left to say it.
 */
export async function printErr(line: string, held?: HeldSignals): Promise<void> {
  try {
    await writeAll(Deno.stderr, `${line}\n`, held);
  } catch { /* nowhere left to say it */ }
}
