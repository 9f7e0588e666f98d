/**
 * Lines for stdout or stderr, gathered and written once per event-loop turn, asynchronously, with
 * at most MAX_BACKLOG_BYTES waiting: past that, lines are dropped and counted, and a line made by
 * `dropped(n)` says how many once the writes catch up. A synchronous write made the serving thread
 * wait for whoever reads the stream: a log shipper at 0.6 MB/s took a paying client's p50 from
 * 1.5 ms to 385 ms while another client flooded the log, one that stopped reading stopped the
 * server, and under systemd stdout and stderr share that one pipe.
 */
import { utf8Bytes } from "./utf8_bytes.ts";

/** Bytes of lines waiting for the stream before further lines are dropped. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

interface Stream {
  write(p: Uint8Array): Promise<number>;
}

const encoder = new TextEncoder();
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * The bytes `text` and its newline take once written. Counted as UTF-16 units, a line of
 * three-byte characters (a logged path is decoded, so any client can send one) held three times
 * the bound (probe ID); nearly every line is ASCII, whose length is its size.
 */
function lineBytes(text: string): number {
  return (NON_ASCII.test(text) ? utf8Bytes(text) : text.length) + 1;
}

export class LineWriter {
  #pending: string[] = [];
  #scheduled = false;
  #backlog: string[] = [];
  #backlogBytes = 0;
  #dropped = 0;
  #writing: Promise<void> | null = null;

  constructor(
    private readonly stream: Stream,
    /** The line that reports `n` lines dropped. */
    private readonly dropped: (n: number) => string,
  ) {}

  line(text: string): void {
    this.#pending.push(text);
    if (this.#pending.length >= 512) return this.#flush();
    if (!this.#scheduled) {
      this.#scheduled = true;
      setTimeout(() => this.#flush(), 0);
    }
  }

  /** Waits up to `ms` for every line so far to be written (before exit). */
  async settle(ms: number): Promise<void> {
    this.#flush();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      (async () => {
        while (this.#writing) await this.#writing;
      })(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  #flush(): void {
    this.#scheduled = false;
    for (const text of this.#pending) {
      const bytes = lineBytes(text);
      if (this.#backlogBytes + bytes > MAX_BACKLOG_BYTES) {
        this.#dropped++;
        continue;
      }
      this.#backlog.push(text);
      this.#backlogBytes += bytes;
    }
    this.#pending = [];
    if (!this.#writing && (this.#backlog.length || this.#dropped)) {
      this.#writing = this.#write().finally(() => (this.#writing = null));
    }
  }

  async #write(): Promise<void> {
    try {
      while (this.#backlog.length || this.#dropped) {
        if (this.#dropped) {
          this.#backlog.unshift(this.dropped(this.#dropped));
          this.#dropped = 0;
        }
        let data = encoder.encode(this.#backlog.join("\n") + "\n");
        this.#backlog = [];
        this.#backlogBytes = 0;
        while (data.length) data = data.subarray(await this.stream.write(data));
      }
    } catch {
      this.#backlog = []; // the stream is closed: nothing to do but go on serving
      this.#backlogBytes = 0;
    }
  }
}
