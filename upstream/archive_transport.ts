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

interface Recorded {
  url: string;
  status: number;
  headers: Headers;
  body: Uint8Array;
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
        const body = await record.readFully(true); // de-chunked and decompressed, as fetch gives it
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
