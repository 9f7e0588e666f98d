/**
 * `UPSTREAM_RECORD`: appends every upstream answer to a WARC file as a standard WARC/1.1
 * `response` record (HTTP status line, headers and body), written with webrecorder's warcio.
 *
 * The record's target URI is the marketplace URL that was requested, so that `archive:` finds
 * it by that URL; a redirect's final URL rides along in `WARC-Refers-To-Target-URI`. Bodies are
 * stored decoded, so `Content-Encoding` and `Transfer-Encoding` are left out and
 * `Content-Length` is the stored length.
 */
import { WARCRecord, WARCSerializer } from "warcio";
import type { Transport, UpstreamRequest, UpstreamResponse } from "./transport.ts";

const DROPPED = new Set(["content-encoding", "transfer-encoding", "content-length"]);

/** UPSTREAM_RECORD_MAX_MB's default: the file is not written past it. */
export const RECORD_MAX_MB = 1024;

export class RecordingTransport implements Transport {
  private writing: Promise<void> = Promise.resolve();
  /** The file's size, read at the first append; null until then. */
  private size: number | null = null;
  private full = false;
  private readonly gzip: boolean;

  constructor(
    private readonly inner: Transport,
    private readonly path: string,
    /** Where a failed write is said (main.ts: the ops log). */
    private readonly log: (line: Record<string, unknown>) => void = () => {},
    /**
     * The file's largest size. Any key, a free one included, makes records (a 404 is an answer
     * the recorder keeps, and costs nothing): one scale key wrote 1.38 GB in 60 s (probe AN).
     */
    private readonly maxBytes = RECORD_MAX_MB * 1024 * 1024,
  ) {
    // Each record its own gzip member, as .warc.gz files are: a name ending in .gz promised it,
    // and the file was plain text (about 5 times larger for Amazon's pages).
    this.gzip = path.endsWith(".gz");
  }

  async fetch(req: UpstreamRequest): Promise<UpstreamResponse> {
    // A response the inner transport reads may hand its body to a page worker: record it first.
    const read = req.read;
    const recorded = new Set<UpstreamResponse>();
    const res = await this.inner.fetch({
      ...req,
      read: read && (async (r) => {
        recorded.add(r);
        await this.record(req.url, r);
        return read(r);
      }),
    });
    // A body gone to a worker was read, so recorded, by the call whose fetch others shared.
    if (!recorded.has(res) && !(res.body.buffer as ArrayBuffer).detached) {
      await this.record(req.url, res);
    }
    return res;
  }

  /**
   * Appends are chained so that records never interleave. A write that fails (a full disk, the
   * file made unwritable) is the operator's to see, in the log: the page was fetched, so the call
   * is answered. Failing it instead was taken for a failed connection, retried, and answered a
   * 502 quoting the file's path to the client.
   */
  private record(url: string, res: UpstreamResponse): Promise<void> {
    const done = this.writing.then(() => this.append(url, res)).catch((e) => {
      this.log({
        event: "record_failed",
        url,
        error: (e instanceof Error ? e.message : String(e)).split("\n")[0].slice(0, 200),
      });
    });
    this.writing = done;
    return done;
  }

  async close(): Promise<void> {
    await this.writing;
    await this.inner.close?.();
  }

  private async append(url: string, res: UpstreamResponse): Promise<void> {
    if (this.full) return;
    const bytes = await serializeResponse(url, res, this.gzip);
    this.size ??= await Deno.stat(this.path).then((s) => s.size, () => 0);
    if (this.size + bytes.length > this.maxBytes) {
      this.full = true;
      this.log({ event: "record_full", max_bytes: this.maxBytes });
      return;
    }
    await Deno.writeFile(this.path, bytes, { append: true, create: true, mode: 0o600 });
    this.size += bytes.length;
  }
}

export async function serializeResponse(
  url: string,
  res: UpstreamResponse,
  gzip = false,
): Promise<Uint8Array> {
  const httpHeaders: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!DROPPED.has(k) && k !== "set-cookie") httpHeaders[k] = v;
  });
  httpHeaders["content-length"] = String(res.body.length);
  const warcHeaders: Record<string, string> = {};
  if (res.url !== url) warcHeaders["WARC-Refers-To-Target-URI"] = res.url;
  const record = await WARCRecord.create(
    {
      url,
      type: "response",
      warcVersion: "WARC/1.1",
      statusline: `HTTP/1.1 ${res.status} ${statusText(res.status)}`,
      httpHeaders,
      warcHeaders,
    },
    (async function* () {
      yield res.body;
    })(),
  );
  return await WARCSerializer.serialize(record, { gzip });
}

function statusText(status: number): string {
  return ({
    200: "OK",
    301: "Moved Permanently",
    302: "Found",
    404: "Not Found",
    503: "Service Unavailable",
  } as Record<number, string>)[status] ?? "";
}
