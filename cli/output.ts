/**
 * The admin CLI's output: every command's JSON on stdout, and a refusal's one line on stderr,
 * written whole on any stream an operator may hand it. What each rule answers:
 * - console.log drops a write to a pipe whose reader has gone without a word, and a new key's
 *   value printed so stayed active, unseen (probe FW): writes here throw, and the caller revokes.
 * - A stream that is full for now is waited on while its reader reads, up to WAIT_MS without
 *   progress: taken for a gone reader, a slow reader's key was revoked (probe FX). Writes are
 *   asynchronous, in chunks, so that the wait can end whether the stream is non-blocking (EAGAIN)
 *   or blocking: a blocking write held the only thread, and a full blocking pipe kept the CLI
 *   alive past every signal and every deadline (probe GC). A chunk is at most PIPE_BUF and ends a
 *   line, so that a non-blocking pipe never takes part of one (see CHUNK).
 * - From the output on, SIGINT, SIGTERM and SIGHUP only end a wait (HeldSignals): killed while
 *   waiting, or while revoking afterwards, the CLI left the key active and said nothing (probes
 *   GA, GB). The signal that ends the wait for stdout does not end the wait for the last line
 *   (what became of the key): under `2>&1` that line waits on the same full stream, and was lost
 *   at once (probe GC); a further signal gives it up.
 * - The note that the CLI is waiting is given once, and may be lost: stderr may be the same full
 *   stream (probe GB); under `2>&1` it is not given, as it landed inside the JSON (probe GF).
 */
import { fstatSync } from "node:fs";

const WAIT_MS = 60_000;
/**
 * PIPE_BUF: a pipe takes a write this long whole or not at all, never in part. The runtime's stdout
 * goes through a line buffer: when a non-blocking pipe took part of a longer write, the buffer kept
 * some of the rest and the write failed (EAGAIN) all the same, so the retry wrote those bytes
 * again, with every retry (probe GF: 2.8 MB for a 27.6 KB account list; writeSync did the same).
 */
const CHUNK = 4096;
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
export async function writeAll(
  stream: Writer,
  text: string,
  held?: HeldSignals,
  onWait?: () => void,
): Promise<void> {
  const bytes = encoder.encode(text);
  const signalsBefore = held?.count ?? 0;
  let giveUpAt = Date.now() + WAIT_MS;
  let noteAt = Date.now() + NOTE_AFTER_MS;
  let noted = false;
  const waiting = () => {
    if (held && held.count > signalsBefore) {
      throw new Error(`${held.caught} while the reader was not reading`);
    }
    if (Date.now() > giveUpAt) throw new Error("the reader read nothing for a minute");
    if (!noted && Date.now() > noteAt) {
      // Once: on a non-blocking stream every EAGAIN moved the time up, and it was given 2,000
      // times a minute (probe GF).
      noted = true;
      onWait?.();
    }
  };
  for (let done = 0; done < bytes.length;) {
    const written = stream.write(bytes.subarray(done, chunkEnd(bytes, done))).then(
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

/**
 * Where the chunk from `start` ends: after its last line break, so that the line buffer (see
 * CHUNK) has nothing after it to keep.
 */
function chunkEnd(bytes: Uint8Array, start: number): number {
  const end = Math.min(bytes.length, start + CHUNK);
  if (end === bytes.length) return end;
  // Within the chunk only: searched back through everything written, a long line cost a pass
  // over the whole output for every chunk.
  const lineEnd = bytes.subarray(start, end).lastIndexOf(NEWLINE);
  return lineEnd >= 0 ? start + lineEnd + 1 : end;
}
const NEWLINE = 10;

function tick(): Promise<undefined> {
  return new Promise((r) => setTimeout(() => r(undefined), 10));
}

/** A command's JSON on stdout, whole, or a throw (see the module's rules). */
export async function printOut(text: string, held: HeldSignals): Promise<void> {
  // Under `2>&1` the note would land inside the JSON, between two of its chunks (probe GF).
  const apart = !sameFile(1, 2);
  await writeAll(Deno.stdout, text, held, () => {
    // A note only: stderr may be full too, and it is not waited for.
    if (apart) {
      Deno.stderr.write(encoder.encode("admin: waiting for stdout's reader (Ctrl-C gives up)\n"))
        .catch(() => {});
    }
  });
}

/** Whether two of this process's descriptors are one file (a pipe under `2>&1`). */
function sameFile(a: number, b: number): boolean {
  try {
    const [x, y] = [fstatSync(a), fstatSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
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
