/**
 * `UPSTREAM=archive:PATH`: answers upstream requests from recorded WARC `response` records (a
 * .warc or .warc.gz file, or a folder of them, read once, as the transport is made). Requests and records are
 * matched on their canonical URL (canonical_url.ts); when a URL was recorded more than once the
 * latest record answers. An unrecorded URL is a 502, as the marketplace being unreachable is.
 */
import { AsyncIterReader, type LimitReader, WARCParser, type WARCRecord } from "warcio";
import { decodeBody } from "./record_body.ts";
import { ApiError } from "../core/api_error.ts";
import { canonicalUrl } from "./canonical_url.ts";
import { upstreamUrl } from "../schemas/marketplace_url.ts";
import type { Transport, UpstreamRequest, UpstreamResponse } from "./transport.ts";
import { MAX_UPSTREAM_BYTES } from "./read_capped.ts";

interface Recorded {
  url: string;
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** Why the record cannot answer: larger than any page may be, or cut short in the file. */
  unusable?: string;
  /** What the entry counts against the archive's budget. */
  kept: number;
}

/**
 * Bytes the archive's index may hold in all, pages, headers and entries: each record is capped at
 * MAX_UPSTREAM_BYTES, and 200 such records of gzip in a 1.7 MB file held 1.8 GB (probe DZ).
 * Reading stops at the record that would pass it.
 */
export const MAX_ARCHIVE_HELD_BYTES = 256 * 1024 * 1024;
/**
 * Bytes the archive may take to read, records skipped or not: a file of gzip decompresses as it is
 * read, and a record declaring terabytes would be read for as long as that takes.
 */
export const MAX_ARCHIVE_READ_BYTES = 2 * 1024 * 1024 * 1024;
/** Bytes a record's WARC and HTTP header blocks may take together (a page's are a few KB). */
export const MAX_ARCHIVE_HEADER_BYTES = 1024 * 1024;
/** What an index entry costs beside its strings and body (measured: about 0.9 KB). */
const ENTRY_BYTES = 1024;

type Log = (line: Record<string, unknown>) => void;

export class ArchiveTransport implements Transport {
  /** Read once, from the start: a failure is the operator's to fix, not retried per call. */
  private readonly index: Promise<Map<string, Recorded>>;

  constructor(
    path: string,
    log: Log = () => {},
    limits = { held: MAX_ARCHIVE_HELD_BYTES, read: MAX_ARCHIVE_READ_BYTES },
  ) {
    this.index = loadArchive(path, limits).then(
      ({ index, skipped, unread }) => {
        log({
          event: "archive_loaded",
          records: index.size,
          ...(skipped ? { skipped } : {}),
          ...(unread ? { unread } : {}),
        });
        return index;
      },
      (e) => {
        // The reason, with the file's path, is the operator's; a client is only told it failed.
        log({ event: "archive_unreadable", error: (e as Error).message });
        throw e;
      },
    );
    this.index.catch(() => {});
  }

  async fetch(req: UpstreamRequest): Promise<UpstreamResponse> {
    const index = await this.index.catch(() => {
      throw new ApiError(
        502,
        "upstream_error",
        "The replay archive could not be read; the server's log says why.",
      );
    });
    const hit = index.get(canonicalUrl(req.url));
    if (!hit) {
      throw new ApiError(
        502,
        "upstream_error",
        `The replay archive holds no response for ${req.url}.`,
      );
    }
    if (hit.unusable) {
      throw new ApiError(
        502,
        "upstream_error",
        `The replay archive's response for ${req.url} ${hit.unusable}.`,
      );
    }
    // A copy: the caller may transfer the body to a page worker, and the record answers again.
    return {
      ...hit,
      headers: new Headers(hit.headers),
      body: hit.body.slice(),
      authenticated: false,
    };
  }
}

/**
 * warcio's reader of a file, counting every byte it hands out, decompressed: past the archive's
 * read limit, or past MAX_ARCHIVE_HEADER_BYTES while header blocks are read (warcio reads one to
 * its blank line, holding it all: a 400 MiB block in 1.7 MB of gzip took 3.4 GB; probe ED), the
 * next read throws. Bytes are counted as read, not as records declare them: a negative
 * Content-Length took its record's bytes off the count (probe ED).
 */
class CountedReader extends AsyncIterReader {
  /** Where the header blocks being read began, or null while a record's body is read. */
  headersFrom: number | null = 0;

  constructor(
    source: ReadableStream<Uint8Array>,
    /** What is left of the archive's read limit for this file, and the whole limit. */
    private readonly limit: { left: number; whole: number },
  ) {
    super(source);
  }

  override _next(): Promise<Uint8Array | null> {
    if (this._readOffset > this.limit.left) {
      return Promise.reject(
        new ArchiveTooLarge(
          `the archive is larger than the ${this.limit.whole >> 20} MiB it may be`,
        ),
      );
    }
    if (
      this.headersFrom !== null && this._readOffset - this.headersFrom > MAX_ARCHIVE_HEADER_BYTES
    ) {
      return Promise.reject(
        new Error(`a record's headers are longer than ${MAX_ARCHIVE_HEADER_BYTES >> 20} MiB`),
      );
    }
    return super._next();
  }
}

class ArchiveTooLarge extends Error {}

async function loadArchive(
  path: string,
  limits: { held: number; read: number },
): Promise<{ index: Map<string, Recorded>; skipped: number; unread?: string[] }> {
  const index = new Map<string, Recorded>();
  const budget = { held: 0, read: 0, limits };
  const counts = { skipped: 0 };
  // Why files were left before their end; what they held before that is kept.
  const unread: string[] = [];
  for (const file of await warcFiles(path)) {
    const f = await Deno.open(file);
    const reader = new CountedReader(f.readable, {
      left: limits.read - budget.read,
      whole: limits.read,
    });
    try {
      await readFile(reader, index, budget, counts);
    } catch (e) {
      unread.push(`${file}: ${(e as Error).message}`);
      if (e instanceof ArchiveTooLarge) break;
    } finally {
      budget.read += reader.getReadOffset();
      try {
        f.close();
      } catch { /* the parser's stream already closed it */ }
    }
  }
  return { index, skipped: counts.skipped, ...(unread.length ? { unread } : {}) };
}

async function readFile(
  reader: CountedReader,
  index: Map<string, Recorded>,
  budget: { held: number; limits: { held: number } },
  counts: { skipped: number },
): Promise<void> {
  let turn = performance.now();
  for await (const record of new WARCParser(reader)) {
    // The archive is read while the server answers: millions of tiny records read in one go held
    // the event loop for minutes, /healthz unanswered (probe HE).
    if (performance.now() - turn > 10) {
      await new Promise((r) => setTimeout(r, 0));
      turn = performance.now();
    }
    reader.headersFrom = null;
    const length = record.warcHeaders.headers.get("Content-Length") ?? "";
    if (!/^\d+$/.test(length.trim())) {
      // Where the record ends, and the next begins, is unknown.
      throw new Error(`a record's Content-Length is ${JSON.stringify(length.slice(0, 40))}`);
    }
    let entry: [string, Recorded] | null = null;
    try {
      entry = await indexed(record, budget, index);
    } catch (e) {
      if (e instanceof ArchiveTooLarge) throw e;
      counts.skipped++; // a record this reader cannot make sense of (a target URI that is no URL)
    }
    // The rest of the record, read here rather than by warcio, which skips it in a loop that never
    // ends when the file ends first: one cut-short request record hung the server for good, deaf
    // to SIGTERM (probe DZ).
    const limited = record._reader as LimitReader;
    const whole = await skipRest(limited);
    record.consumed = "skipped";
    if (entry) {
      if (!whole && !entry[1].unusable) entry[1] = { ...entry[1], unusable: "was cut short" };
      index.set(...entry);
    }
    if (!whole) return; // nothing follows a record the file ends in
    reader.headersFrom = reader.getReadOffset();
  }
}

/** Skips what is left of a record; false when the file ended first. */
async function skipRest(reader: LimitReader): Promise<boolean> {
  while (reader.limit > 0) {
    const n = await reader.sourceIter.skipSize(Math.min(reader.limit, 1 << 20));
    if (n <= 0) return false;
    reader.limit -= n;
  }
  return true;
}

/** A response record's index entry, or null for the other kinds. */
async function indexed(
  record: WARCRecord,
  budget: { held: number; limits: { held: number } },
  index: Map<string, Recorded>,
): Promise<[string, Recorded] | null> {
  if (record.warcType !== "response" || !record.httpHeaders || !record.warcTargetURI) {
    return null;
  }
  const target = record.warcTargetURI;
  const key = canonicalUrl(target);
  const { body, unusable } = await readRecordBody(record);
  const headers = new Headers();
  let kept = ENTRY_BYTES + 2 * (key.length + target.length) + body.length;
  for (const [k, v] of record.httpHeaders.headers) {
    if (
      !["content-encoding", "transfer-encoding", "content-length"].includes(k.toLowerCase())
    ) {
      headers.append(k, v);
      kept += 2 * (k.length + v.length);
    }
  }
  // Everything an entry keeps counts, not its body alone: a million empty records in 3 MB of gzip
  // took 1.7 GB, and records of 900 KB of headers each 2.4 GB (probe EL). Past the limit the
  // archive is read no further; the records before stay.
  // A URL recorded again replaces its entry (the latest answers): what that one kept is freed.
  const replaced = index.get(key)?.kept ?? 0;
  if (budget.held - replaced + kept > budget.limits.held) {
    throw new ArchiveTooLarge(
      `the archive holds more than the ${budget.limits.held >> 20} MiB of pages it may`,
    );
  }
  budget.held += kept - replaced;
  const refers = record.warcHeaders.headers.get("WARC-Refers-To-Target-URI");
  const led = refers == null ? target : ledTo(target, refers);
  return [key, {
    kept,
    url: led ?? target,
    status: Number(record.httpHeaders.statusCode),
    headers,
    body,
    unusable: unusable ??
      (led === null
        ? "led to a page off its marketplace"
        : cutShort(record.httpHeaders.headers, body)),
  }];
}

/**
 * The page a recorded answer says its request led to, as a live redirect is judged: a page of the
 * same marketplace, else null. Taken as it came, it answered a scrape, charged, as
 * `http://169.254.169.254/…`, `javascript:…` or amazon.de's page labelled US (probe HE).
 */
function ledTo(target: string, refers: string): string | null {
  try {
    const from = upstreamUrl(target);
    const to = upstreamUrl(refers);
    return to.marketplace.code === from.marketplace.code ? to.url.href : null;
  } catch {
    return null;
  }
}

/**
 * A record's body, de-chunked and decompressed as fetch gives it (record_body.ts), its recorded
 * bytes read no further than the cap a live page has (read_capped.ts): read whole, a 1 MB record
 * of gzip held 1 GiB, and each answer copied it again (probe CP). The rest of a larger record is
 * skipped unread. A whole record may hold a body cut short when it was recorded (a gzip stream
 * without its end, a chunked body without its last chunk), which was served as a shorter page
 * (probe ED).
 */
async function readRecordBody(
  record: WARCRecord,
): Promise<{ body: Uint8Array; unusable?: string }> {
  const raw = record._reader as LimitReader;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of raw) {
    size += chunk.length;
    if (size > MAX_UPSTREAM_BYTES) {
      return {
        body: new Uint8Array(),
        unusable: `is larger than the ${MAX_UPSTREAM_BYTES >> 20} MiB any page may be`,
      };
    }
    chunks.push(chunk);
  }
  // The reader is limited to the record's WARC Content-Length: bytes it still expected when the
  // file ended mean the record was cut short, whatever its encoding (probe CR).
  if (raw.limit > 0) {
    return { body: new Uint8Array(), unusable: `was cut short (${raw.limit} bytes missing)` };
  }
  const recorded = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    recorded.set(c, at);
    at += c.length;
  }
  const headers = record.httpHeaders?.headers;
  const decoded = await decodeBody(
    recorded,
    headers?.get("transfer-encoding") ?? undefined,
    headers?.get("content-encoding") ?? undefined,
    MAX_UPSTREAM_BYTES,
  );
  return "body" in decoded ? decoded : { body: new Uint8Array(), unusable: decoded.unusable };
}

/** A plain body shorter than its recorded Content-Length: the file was cut in the middle of it. */
function cutShort(headers: Iterable<[string, string]>, body: Uint8Array): string | undefined {
  const get = (name: string) => {
    for (const [k, v] of headers) if (k.toLowerCase() === name) return v;
    return undefined;
  };
  const length = get("content-length");
  if (length === undefined || get("content-encoding") || get("transfer-encoding")) return undefined;
  return /^\d+$/.test(length.trim()) && body.length < Number(length)
    ? `was cut short (${body.length} of its ${length} bytes)`
    : undefined;
}

async function warcFiles(path: string): Promise<string[]> {
  const info = await Deno.stat(path);
  if (info.isFile) return [path];
  const files: string[] = [];
  for await (const e of Deno.readDir(path)) {
    if (!/\.warc(\.gz)?$/.test(e.name)) continue;
    const file = `${path.replace(/\/$/, "")}/${e.name}`;
    // A symlink is read when it leads to a regular file, as an `archive:` naming one is: passed
    // over, a folder of them loaded no record without a word (probe HE). A FIFO or a device is not
    // (reading one would wait for a writer, or never end).
    if (e.isFile || (e.isSymlink && (await Deno.stat(file).catch(() => null))?.isFile)) {
      files.push(file);
    }
  }
  return files.sort();
}
