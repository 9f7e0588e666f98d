/**
 * `UPSTREAM=archive:PATH`: answers upstream requests from recorded WARC `response` records (a
 * .warc or .warc.gz file, or a folder of them, read once on first use). Requests and records are
 * matched on their canonical URL (canonical_url.ts); when a URL was recorded more than once the
 * latest record answers. An unrecorded URL is a 502, as the marketplace being unreachable is.
 */
import { WARCParser, type WARCRecord } from "warcio";
import { ApiError } from "../core/api_error.ts";
import { canonicalUrl } from "./canonical_url.ts";
import type { Transport, UpstreamRequest, UpstreamResponse } from "./transport.ts";
import { MAX_UPSTREAM_BYTES } from "./read_capped.ts";

interface Recorded {
  url: string;
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** Why the record cannot answer: larger than any page may be, or cut short in the file. */
  unusable?: string;
}

/**
 * Decoded page bytes the archive may hold in all: each record is capped at MAX_UPSTREAM_BYTES, and
 * 200 such records of gzip in a 1.7 MB file held 1.8 GB (probe DZ). Records past it are indexed,
 * and answer as unusable.
 */
export const MAX_ARCHIVE_HELD_BYTES = 256 * 1024 * 1024;
/**
 * Bytes the archive may take to read, records skipped or not: a file of gzip decompresses as it is
 * read, and a record declaring terabytes would be read for as long as that takes.
 */
export const MAX_ARCHIVE_READ_BYTES = 2 * 1024 * 1024 * 1024;

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
      ({ index, skipped }) => {
        log({ event: "archive_loaded", records: index.size, ...(skipped ? { skipped } : {}) });
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

/** What warcio's record keeps of its place in the file (warcio 2.4, pinned in deno.json). */
interface RecordReader {
  /** Bytes of the record not yet read. */
  limit: number;
  sourceIter: { skipSize(n: number): Promise<number> };
}

async function loadArchive(
  path: string,
  limits: { held: number; read: number },
): Promise<{ index: Map<string, Recorded>; skipped: number }> {
  const index = new Map<string, Recorded>();
  const budget = { held: 0, read: 0, limits };
  let skipped = 0;
  for (const file of await warcFiles(path)) {
    const f = await Deno.open(file);
    try {
      for await (const record of new WARCParser(f.readable)) {
        const reader = record._reader as unknown as RecordReader;
        const declared = reader.limit;
        let entry: [string, Recorded] | null = null;
        try {
          entry = await indexed(record, budget);
        } catch {
          skipped++; // a record this reader cannot make sense of (a target URI that is no URL)
        }
        // The rest of the record, read here rather than by warcio, which skips it in a loop that
        // never ends when the file ends first: one cut-short request record hung the server for
        // good, deaf to SIGTERM (probe DZ).
        const rest = await skipRest(reader, limits.read - budget.read);
        (record as { consumed: string }).consumed = "skipped";
        budget.read += declared - Math.max(0, reader.limit);
        if (rest === "over") {
          throw new Error(
            `the archive is larger than the ${limits.read >> 20} MiB it may be`,
          );
        }
        if (entry) {
          if (rest === "cut" && !entry[1].unusable) {
            entry[1] = { ...entry[1], unusable: "was cut short" };
          }
          index.set(...entry);
        }
        if (rest === "cut") break; // nothing follows a record the file ends in
      }
    } finally {
      try {
        f.close();
      } catch { /* the parser's stream already closed it */ }
    }
  }
  return { index, skipped };
}

/**
 * Skips what is left of a record, reading at most `allowance` bytes: "cut" when the file ended
 * first, "over" when the record is longer than that.
 */
async function skipRest(reader: RecordReader, allowance: number): Promise<"done" | "cut" | "over"> {
  const step = 1 << 20;
  while (reader.limit > 0) {
    if (allowance <= 0) return "over";
    const n = await reader.sourceIter.skipSize(Math.min(reader.limit, step, allowance));
    if (n <= 0) return "cut";
    reader.limit -= n;
    allowance -= n;
  }
  return "done";
}

/** A response record's index entry, or null for the other kinds. */
async function indexed(
  record: WARCRecord,
  budget: { held: number; limits: { held: number } },
): Promise<[string, Recorded] | null> {
  if (record.warcType !== "response" || !record.httpHeaders || !record.warcTargetURI) {
    return null;
  }
  const target = record.warcTargetURI;
  const key = canonicalUrl(target);
  const read = await readRecordBody(record);
  let { body, unusable } = read;
  if (!unusable && budget.held + body.length > budget.limits.held) {
    body = new Uint8Array();
    unusable = `is past the ${budget.limits.held >> 20} MiB of pages an archive may hold`;
  }
  budget.held += body.length;
  const headers = new Headers();
  for (const [k, v] of record.httpHeaders.headers) {
    if (
      !["content-encoding", "transfer-encoding", "content-length"].includes(k.toLowerCase())
    ) headers.append(k, v);
  }
  return [key, {
    url: record.warcHeaders.headers.get("WARC-Refers-To-Target-URI") ?? target,
    status: Number(record.httpHeaders.statusCode),
    headers,
    body,
    unusable: unusable ?? cutShort(record.httpHeaders.headers, body),
  }];
}

/**
 * A record's body, de-chunked and decompressed as fetch gives it, read no further than the cap a
 * live page has (read_capped.ts): read whole, a 1 MB record of gzip held 1 GiB, and each answer
 * copied it again (probe CP). The rest of a larger record is skipped unread.
 */
async function readRecordBody(
  record: AsyncIterable<Uint8Array> & { _reader?: unknown },
): Promise<{ body: Uint8Array; unusable?: string }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of record) {
    size += chunk.length;
    if (size > MAX_UPSTREAM_BYTES) {
      return {
        body: new Uint8Array(),
        unusable: `is larger than the ${MAX_UPSTREAM_BYTES >> 20} MiB any page may be`,
      };
    }
    chunks.push(chunk);
  }
  // warcio reads a record through a reader limited to its WARC Content-Length: bytes it still
  // expected when the file ended mean the record was cut short, whatever its encoding (a gzip or
  // chunked body cut in the middle decodes to a shorter page without a word; probe CR).
  const expected = (record._reader as { limit?: unknown } | undefined)?.limit;
  if (typeof expected === "number" && expected > 0) {
    return { body: new Uint8Array(), unusable: `was cut short (${expected} bytes missing)` };
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return { body };
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
    if (e.isFile && /\.warc(\.gz)?$/.test(e.name)) {
      files.push(`${path.replace(/\/$/, "")}/${e.name}`);
    }
  }
  return files.sort();
}
