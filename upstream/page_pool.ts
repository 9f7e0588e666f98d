/**
 * Where page work (decode, detect, parse: page_read.ts) runs. `PARSE_WORKERS=0` reads pages
 * inline on the serving thread; otherwise a pool of Web Workers does, so the serving thread keeps
 * only HTTP, metering, caches and upstream I/O.
 *
 * The pool transfers each body's buffer to a worker (no copy) and gets plain data back. A job
 * that outlives `timeoutMs`, or a worker that dies, fails that one call with an uncharged 502
 * and the worker is replaced. Replaced once its thread has stopped: Deno's Worker.terminate()
 * does not interrupt a thread busy in synchronous code, so a timed-out parse kept its thread
 * spinning while a new one took its place (22 such threads in two minutes of 0-credit calls).
 * A timed-out slot drains, its thread telling through a shared flag when it is done, and gets a
 * new worker then, or after `drainMs` at the latest. Jobs wait in a bounded queue; past
 * `queueLimit` jobs, `ownerLimit` jobs of one account, or MAX_WAITING_BYTES of bodies, a call is
 * refused at once with 503 `upstream_busy` (Retry-After: 1) rather than holding its page in
 * memory. A job whose `signal` aborts while it waits leaves the queue: its caller has had its
 * answer (a 504 at the deadline), and reading its page would only delay the jobs behind it.
 *
 * Waiting jobs take turns by account (core/limiter.ts), as upstream slots do: first come, first
 * served, one account's 90 calls over the 18 marketplaces, each a page that takes a worker most
 * of a second and fails (uncharged), held every other account's calls for 19–34 s (probe AO).
 */
import { ApiError } from "../core/api_error.ts";
import { KeyedLimiter, LimiterFull } from "../core/limiter.ts";
import { ByteBudget } from "./read_capped.ts";
import { type PageJob, type PageOutcome, readPage } from "./page_read.ts";
import type { JobMessage } from "./page_worker.ts";

export interface PageReader {
  /** Worker threads doing the work; 0 means inline. */
  readonly workers: number;
  /** `owner`: the account the page is read for, whose jobs take turns with other accounts'. */
  read(job: PageJob, body: Uint8Array, signal?: AbortSignal, owner?: string): Promise<PageOutcome>;
  close(): void;
}

/** Bodies waiting for a worker, in bytes: 16 of the largest page a read accepts (8 MiB). */
export const MAX_WAITING_BYTES = 128 * 1024 * 1024;

export const inlineReader: PageReader = {
  workers: 0,
  read: (job, body) => Promise.resolve(readPage(job, body)),
  close() {},
};

export interface PoolOptions {
  size: number;
  /** Jobs waiting for a worker before calls are refused (default 64 per worker). */
  queueLimit?: number;
  /** Jobs of one account waiting for a worker before its calls are refused (half queueLimit). */
  ownerLimit?: number;
  /** Bytes of bodies waiting for a worker before calls are refused (MAX_WAITING_BYTES). */
  waitingBytes?: number;
  /** A job running longer than this is abandoned and its worker replaced (default 10 s). */
  timeoutMs?: number;
  /** The worker module; tests substitute one that can crash or hang. */
  workerUrl?: URL;
  /** One line per replaced worker, for the operations log. */
  log?: (line: Record<string, unknown>) => void;
  /** The longest a timed-out worker's thread is waited for before a new one starts (60 s). */
  drainMs?: number;
}

interface Task {
  id: number;
  job: PageJob;
  buffer: ArrayBuffer;
  resolve(o: PageOutcome): void;
  reject(e: unknown): void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** 1 while the worker's thread reads a page (page_worker.ts sets it). */
  busy: Int32Array<SharedArrayBuffer>;
  /** Since when a terminated worker's thread has been waited for. */
  draining?: number;
}

const WORKER_URL = new URL("./page_worker.ts", import.meta.url);

export class PagePool implements PageReader {
  readonly workers: number;
  readonly #queue: Task[] = [];
  readonly #slots: (Slot | null)[];
  readonly #queueLimit: number;
  /** Jobs' turns for a worker, by account. */
  readonly #turns: KeyedLimiter;
  #waiting = 0;
  /** Bytes of bodies waiting, with a share per account past half (as reads share theirs). */
  readonly #waitingBytes: ByteBudget;
  readonly #timeoutMs: number;
  readonly #url: URL;
  readonly #log: (line: Record<string, unknown>) => void;
  readonly #drainMs: number;
  #drainCheck: ReturnType<typeof setInterval> | undefined;
  #nextId = 1;
  #closed = false;
  /** Workers replaced after a crash or a timeout, since start. */
  replaced = 0;

  constructor(o: PoolOptions) {
    this.workers = Math.max(1, Math.floor(o.size));
    this.#slots = Array.from({ length: this.workers }, () => null);
    this.#queueLimit = o.queueLimit ?? 64 * this.workers;
    this.#waitingBytes = new ByteBudget(o.waitingBytes ?? MAX_WAITING_BYTES);
    this.#turns = new KeyedLimiter(
      this.workers,
      o.ownerLimit ?? Math.max(1, Math.floor(this.#queueLimit / 2)),
    );
    this.#timeoutMs = o.timeoutMs ?? 10_000;
    this.#url = o.workerUrl ?? WORKER_URL;
    this.#log = o.log ?? (() => {});
    this.#drainMs = o.drainMs ?? 60_000;
    // All at start-up, while descriptors are surely free: Deno cannot start a worker's thread
    // when clients hold every descriptor the process may open, and panics (the process ends).
    // Started at the first page instead, a fresh process in that state died at its first call.
    for (let i = 0; i < this.workers; i++) this.#slots[i] = this.#spawn(i);
  }

  /** Slots whose terminated worker's thread is still reading a page. */
  get draining(): number {
    return this.#slots.filter((s) => s?.draining !== undefined).length;
  }

  async read(
    job: PageJob,
    body: Uint8Array,
    signal?: AbortSignal,
    owner = "",
  ): Promise<PageOutcome> {
    if (signal?.aborted) throw signal.reason;
    if (this.#closed) throw new ApiError(503, "unavailable", "The server is shutting down.");
    const size = body.byteLength;
    // A body is read once: its buffer goes to the worker and is gone here. Handed again (callers
    // that shared one answer), it is a failed read of that call, never a throw at the transfer.
    if ((body.buffer as ArrayBuffer).detached) throw alreadyRead();
    // Pages of one account at the cap filled the waiting bytes, and other accounts' calls were
    // refused 10-78% of the time (probe AP): past half, an account waits within its share.
    if (this.#waiting >= this.#queueLimit || !this.#waitingBytes.take(size, owner)) throw busy();
    this.#waiting++;
    let waiting = true;
    const leaveQueue = () => {
      if (!waiting) return;
      waiting = false;
      this.#waiting--;
      this.#waitingBytes.give(size, owner);
    };
    try {
      return await this.#turns.run("pages", () => {
        leaveQueue();
        return this.#post(job, body, signal);
      }, { owner, signal });
    } catch (e) {
      if (e instanceof LimiterFull) throw busy();
      throw e;
    } finally {
      leaveQueue();
    }
  }

  /** Hands the job to a free worker (one is, or soon will be: #turns admits one per worker). */
  #post(job: PageJob, body: Uint8Array, signal?: AbortSignal): Promise<PageOutcome> {
    if (this.#closed) {
      return Promise.reject(new ApiError(503, "unavailable", "The server is shutting down."));
    }
    if ((body.buffer as ArrayBuffer).detached) return Promise.reject(alreadyRead());
    // A view of part of a buffer is copied, so that the transfer cannot detach bytes of others.
    const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength &&
      body.buffer instanceof ArrayBuffer;
    const buffer = (whole ? body.buffer : body.slice().buffer) as ArrayBuffer;
    return new Promise((resolve, reject) => {
      const leave = () => {
        const at = this.#queue.indexOf(task);
        if (at < 0) return; // at a worker already: it runs to its end or its timeout
        this.#queue.splice(at, 1);
        reject(signal!.reason);
      };
      const settle = <T>(done: (v: T) => void) => (v: T) => {
        signal?.removeEventListener("abort", leave);
        done(v);
      };
      const task: Task = {
        id: this.#nextId++,
        job,
        buffer,
        resolve: settle(resolve),
        reject: settle(reject),
      };
      signal?.addEventListener("abort", leave, { once: true });
      this.#queue.push(task);
      this.#pump();
    });
  }

  /** Jobs waiting for a worker now. */
  get queued(): number {
    return this.#waiting + this.#queue.length;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#drainCheck);
    for (const t of this.#queue.splice(0)) {
      t.reject(new ApiError(503, "unavailable", "The server is shutting down."));
    }
    this.#slots.forEach((slot, i) => {
      if (!slot) return;
      clearTimeout(slot.timer);
      slot.worker.terminate();
      slot.task?.reject(new ApiError(503, "unavailable", "The server is shutting down."));
      this.#slots[i] = null;
    });
  }

  #pump(): void {
    this.#pumpQueue();
    // A job waiting for a draining slot keeps the process up, as its caller waits on it; the
    // check alone does not (a process that is done need not wait out a stuck thread).
    if (this.#drainCheck !== undefined) {
      if (this.#queue.length) Deno.refTimer(this.#drainCheck);
      else Deno.unrefTimer(this.#drainCheck);
    }
  }

  #pumpQueue(): void {
    for (let i = 0; i < this.#slots.length && this.#queue.length; i++) {
      if (!this.#slots[i]) {
        // A replacement (after a crash or a timeout) waits while descriptors are short; the
        // drain check pumps again.
        if (!descriptorsToSpare()) {
          this.#retrySpawn();
          continue;
        }
        this.#slots[i] = this.#spawn(i);
      }
      const slot = this.#slots[i]!;
      if (slot.task || slot.draining !== undefined) continue;
      const task = this.#queue.shift()!;
      slot.task = task;
      slot.timer = setTimeout(() => this.#fail(i, "timeout"), this.#timeoutMs);
      const message: JobMessage = {
        id: task.id,
        job: task.job,
        buffer: task.buffer,
        busy: slot.busy.buffer,
      };
      try {
        slot.worker.postMessage(message, [task.buffer]);
      } catch {
        // The buffer left with another job since this one was queued: pump runs from a worker's
        // message handler, where a throw would end the process.
        clearTimeout(slot.timer);
        slot.task = null;
        task.reject(alreadyRead());
        i--; // the slot is free for the next job
      }
    }
  }

  #spawn(i: number): Slot {
    const worker = new Worker(this.#url.href, { type: "module" });
    const busy = new Int32Array(new SharedArrayBuffer(4));
    const slot: Slot = { worker, task: null, timer: undefined, busy };
    worker.onmessage = (e: MessageEvent<{ id: number; outcome: PageOutcome }>) => {
      const task = slot.task;
      if (!task || task.id !== e.data.id) return;
      clearTimeout(slot.timer);
      slot.task = null;
      task.resolve(e.data.outcome);
      this.#pump();
    };
    worker.onerror = (e) => {
      // Handled here: unhandled, a worker's error would end the whole process.
      e.preventDefault();
      this.#fail(i, "crash", e.message);
    };
    worker.onmessageerror = () => this.#fail(i, "crash", "unreadable message");
    return slot;
  }

  /** The worker of slot `i` crashed or ran out of time: its call fails, a new worker takes over. */
  #fail(i: number, why: "timeout" | "crash", detail = ""): void {
    const slot = this.#slots[i];
    if (!slot) return;
    if (slot.draining !== undefined) return;
    clearTimeout(slot.timer);
    slot.worker.terminate();
    if (Atomics.load(slot.busy, 0) === 1) this.#drain(slot);
    else this.#slots[i] = null;
    this.replaced++;
    this.#log({ event: "page_worker_replaced", reason: why, detail: detail.slice(0, 200) });
    const task = slot.task;
    slot.task = null;
    task?.reject(
      new ApiError(
        502,
        "upstream_error",
        why === "timeout"
          ? `Reading the upstream page took longer than ${this.#timeoutMs} ms.`
          : "Reading the upstream page failed; retry.",
      ),
    );
    if (!this.#closed) this.#pump();
  }

  /** Keeps `slot` out of use until its thread has stopped reading, or drainMs has passed. */
  #drain(slot: Slot): void {
    slot.draining = Date.now();
    this.#retrySpawn();
  }

  /** Checks every 100 ms for drained threads and for slots still without a worker. */
  #retrySpawn(): void {
    this.#drainCheck ??= setInterval(() => this.#drained(), 100);
    if (!this.#queue.length) Deno.unrefTimer(this.#drainCheck);
  }

  #drained(): void {
    const now = Date.now();
    this.#slots.forEach((slot, i) => {
      if (slot?.draining === undefined) return;
      const stopped = Atomics.load(slot.busy, 0) === 0;
      if (!stopped && now - slot.draining < this.#drainMs) return;
      this.#slots[i] = null;
      this.#log({
        event: stopped ? "page_worker_drained" : "page_worker_abandoned",
        ms: now - slot.draining,
      });
    });
    if (!this.draining && this.#slots.every((slot) => slot !== null)) {
      clearInterval(this.#drainCheck);
      this.#drainCheck = undefined;
    }
    if (!this.#closed) this.#pump();
  }
}

/** PARSE_WORKERS as a reader: 0 inline, else a pool of that many workers. */
export function pageReaderFor(
  workers: number,
  log?: (line: Record<string, unknown>) => void,
): PageReader {
  return workers > 0 ? new PagePool({ size: workers, log }) : inlineReader;
}

/**
 * Whether a worker's thread can start: it takes a few descriptors (its event loop's), and without
 * them Deno panics. Tried by opening some; a system without /dev/null (or without the permission
 * to read it) is not known to be short.
 */
function descriptorsToSpare(): boolean {
  const opened: Deno.FsFile[] = [];
  try {
    for (let i = 0; i < SPARE_DESCRIPTORS; i++) opened.push(Deno.openSync("/dev/null"));
    return true;
  } catch (e) {
    return !String((e as Error)?.message).includes("os error 24");
  } finally {
    for (const f of opened) f.close();
  }
}
const SPARE_DESCRIPTORS = 16;

function busy(): ApiError {
  return new ApiError(
    503,
    "upstream_busy",
    "Too many pages are waiting to be read; retry in a moment.",
    { "Retry-After": "1" },
  );
}

function alreadyRead(): ApiError {
  return new ApiError(502, "upstream_error", "The upstream page could not be read.");
}
