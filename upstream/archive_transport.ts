/**
 * `UPSTREAM=archive:PATH`: answers upstream requests from recorded WARC `response` records (a
 * .warc or .warc.gz file, or a folder of them, read once on first use). Requests and records are
 * matched on their canonical URL (canonical_url.ts); when a URL was recorded more than once the
 * latest record answers. An unrecorded URL is a 502, as the marketplace being unreachable is.
 */
import { WARCParser } from "warcio";
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

export class ArchiveTransport implements Transport {
  private index?: Promise<Map<string, Recorded>>;

  constructor(private readonly path: string) {}

  async fetch(req: UpstreamRequest): Promise<UpstreamResponse> {
    this.index ??= loadArchive(this.path);
    const index = await this.index.catch((e) => {
      this.index = undefined;
      throw new ApiError(
        502,
        "upstream_error",
        `The replay archive could not be read: ${(e as Error).message}`,
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

async function loadArchive(path: string): Promise<Map<string, Recorded>> {
  const index = new Map<string, Recorded>();
  for (const file of await warcFiles(path)) {
    const f = await Deno.open(file);
    try {
      for await (const record of new WARCParser(f.readable)) {
        if (record.warcType !== "response" || !record.httpHeaders || !record.warcTargetURI) {
          continue;
        }
        const { body, unusable } = await readRecordBody(record);
        const headers = new Headers();
        for (const [k, v] of record.httpHeaders.headers) {
          if (
            !["content-encoding", "transfer-encoding", "content-length"].includes(k.toLowerCase())
          ) headers.append(k, v);
        }
        const target = record.warcTargetURI;
        index.set(canonicalUrl(target), {
          url: record.warcHeaders.headers.get("WARC-Refers-To-Target-URI") ?? target,
          status: Number(record.httpHeaders.statusCode),
          headers,
          body,
          unusable: unusable ?? cutShort(record.httpHeaders.headers, body),
        });
      }
    } finally {
      try {
        f.close();
      } catch { /* the parser's stream already closed it */ }
    }
  }
  return index;
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
