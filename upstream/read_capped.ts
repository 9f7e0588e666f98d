/**
 * Reads an upstream body up to a cap on its DECODED size (issue 13.3): fetch inflates gzip and
 * brotli as it streams, so a small compressed bomb is stopped after MAX_UPSTREAM_BYTES of
 * output, not after gigabytes. The largest Amazon page in the corpus is about 2 MB decoded.
 */
import { ApiError } from "../core/api_error.ts";

export const MAX_UPSTREAM_BYTES = 8 * 1024 * 1024;

/**
 * Bytes of page bodies held at once, shared out among accounts: those being read (below), and
 * those waiting for a page worker (page_pool.ts).
 */
export class ByteBudget {
  #used = 0;
  readonly #byOwner = new Map<string, number>();
  /** The last part of the budget, kept for accounts that hold less than one page. */
  readonly #reserve: number;

  /**
   * `ownerShare`: what one account may hold once more than half the budget is taken, so that
   * one account's pages at the cap cannot leave other accounts' reads refused (a quarter by
   * default). Below half, any account takes what it needs: held to its share at all times, an
   * honest account with 90 calls at once over the 18 marketplaces (its slots' worth) had a third
   * of its large pages dropped half read (probe AP). Half and two quarters are the whole budget,
   * so three accounts with stalled pages at the cap left every other account refused (probe AQ):
   * the last quarter is kept for accounts holding at most `page` (one page at the cap, or a
   * sixteenth of a smaller budget), which may always read one page while any room is left.
   */
  constructor(
    readonly limit: number,
    readonly ownerShare = Math.floor(limit / 4),
    private readonly page = Math.min(MAX_UPSTREAM_BYTES, Math.floor(limit / 16)),
  ) {
    this.#reserve = Math.floor(limit / 4);
  }

  get used(): number {
    return this.#used;
  }

  take(n: number, owner = ""): boolean {
    const own = this.#byOwner.get(owner) ?? 0;
    if (!this.#allows(this.#used + n, own + n)) return false;
    this.#used += n;
    this.#byOwner.set(owner, own + n);
    return true;
  }

  /** Whether `owner` may take nothing more now: a read for it would be refused at its start. */
  spent(owner = ""): boolean {
    return !this.#allows(this.#used + 1, (this.#byOwner.get(owner) ?? 0) + 1);
  }

  /** Whether the budget may stand at `used` with one account holding `own` of it. */
  #allows(used: number, own: number): boolean {
    if (used > this.limit) return false;
    if (own <= this.page) return true; // within one page: the reserve is open to it
    if (used > this.limit - this.#reserve) return false;
    return used <= this.limit / 2 || own <= this.ownerShare;
  }

  give(n: number, owner = ""): void {
    if (n === 0) return;
    this.#used -= n;
    const own = (this.#byOwner.get(owner) ?? 0) - n;
    if (own > 0) this.#byOwner.set(owner, own);
    else this.#byOwner.delete(owner);
  }
}

/**
 * Bytes of bodies being read at once, across every marketplace and account. Each read is capped,
 * but 18 marketplaces' 108 slots of pages sent at just under the cap held about 0.9 GiB (probe
 * AB); 256 MiB is over a hundred of the largest real pages (about 2 MB) at once. Shared out as
 * ByteBudget says: all of it open to one account, that account's pages at the cap left every
 * other account's reads refused (probe AO's victim got 503s).
 */
export const processReadBudget = new ByteBudget(256 * 1024 * 1024);

/** The process's read budget is spent: an uncharged 503 that the transport does not retry. */
export class ReadBudgetSpent extends ApiError {
  constructor() {
    super(
      503,
      "upstream_busy",
      "The server is reading too many pages at once; retry in a moment.",
      { "Retry-After": "1" },
    );
  }
}

/** A body over the cap: an uncharged 502 that the transport does not retry. */
export class BodyTooLarge extends ApiError {
  constructor(cap: number) {
    super(
      502,
      "upstream_error",
      `The marketplace sent more than ${cap / (1024 * 1024)} MiB for one page.`,
    );
  }
}

/**
 * The body's bytes, refused past `cap`. They view a resizable ArrayBuffer: decoding, hashing,
 * writing to files and transferring to a worker take it as it is, but an op that wants a fixed
 * slice (Deno KV's values) refuses one, so copy (`bytes.slice()`) before storing the bytes there.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  cap = MAX_UPSTREAM_BYTES,
  owner = "",
  budget = processReadBudget,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  // One buffer grown in place as chunks arrive (V8 reserves the cap's address space and commits
  // pages as it grows): no list of chunks kept alive to the end, no second copy of the whole page
  // to join them, and the pages go back to the system when the buffer is freed. Settled RSS under
  // the workers bench on a 1.5 MB page: 249-259 MiB against 257-282 with a list of chunks joined.
  const buffer = new ArrayBuffer(0, { maxByteLength: cap });
  const bytes = new Uint8Array(buffer); // tracks the buffer's length as it grows
  const reader = chunks(body);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const at = buffer.byteLength;
      if (at + value.length > cap) throw new BodyTooLarge(cap);
      if (!budget.take(value.length, owner)) throw new ReadBudgetSpent();
      buffer.resize(at + value.length);
      bytes.set(value, at);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  } finally {
    // Read (or given up), the body is its caller's: the page queue bounds what waits from here.
    budget.give(buffer.byteLength, owner);
  }
  return bytes;
}

/** What a body is read by: a chunk at a time, into one buffer used again where it can be. */
interface ChunkReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(): Promise<void>;
}

/** The size of the buffer a byte stream is read into. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A fetch body is a byte stream: read into one buffer that each read hands back, it allocates
 * nothing per chunk, where its default reader allocates a new 64 KiB buffer for each, freed only
 * when the serving isolate next collects (1.5 MB pages at 90 calls/s made 130 MB/s of them).
 * Other streams are read as they come.
 */
function chunks(body: ReadableStream<Uint8Array>): ChunkReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    return body.getReader();
  }
  let scratch = new ArrayBuffer(CHUNK_BYTES);
  return {
    async read() {
      const result = await byob.read(new Uint8Array(scratch));
      if (result.value) scratch = result.value.buffer as ArrayBuffer;
      return result as ReadableStreamReadResult<Uint8Array>;
    },
    cancel: () => byob.cancel(),
  };
}
