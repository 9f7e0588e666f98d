/**
 * The data source an UPSTREAM setting names (INTERFACE.md): `live`, `origin:URL` or
 * `archive:PATH`, with `UPSTREAM_RECORD` wrapping the first two in a WARC recorder, and the
 * proxies (`UPSTREAM_PROXIES`, else `HTTP_PROXY`) and operator sessions (`UPSTREAM_COOKIES_<CODE>`)
 * of the environment.
 */
import type { DataSource } from "./data_source.ts";
import type { Transport } from "./transport.ts";
import { ArchiveTransport } from "./archive_transport.ts";
import { type BrowserOptions, BrowserTransport } from "./browser_transport.ts";
import { RecordingTransport } from "./warc_recorder.ts";
import { UpstreamSource } from "./source.ts";
import { inlineReader, type PageReader } from "./page_pool.ts";
import { MARKETPLACE_CODES } from "../schemas/marketplaces.ts";

type Env = { get(name: string): string | undefined };

export function dataSourceFor(
  upstream: string,
  env: Env = Deno.env,
  log?: (line: Record<string, unknown>) => void,
  reader: PageReader = inlineReader,
): DataSource {
  return new UpstreamSource(transportFor(upstream, env, { log }), reader);
}

export function transportFor(
  upstream: string,
  env: Env = Deno.env,
  extra: BrowserOptions = {},
): Transport {
  if (upstream.startsWith("archive:")) {
    return new ArchiveTransport(upstream.slice("archive:".length));
  }
  let transport: Transport;
  if (upstream === "live") {
    transport = new BrowserTransport({ ...browserOptions(env), ...extra });
  } else if (upstream.startsWith("origin:")) {
    const origin = upstream.slice("origin:".length);
    new URL(origin); // a malformed origin fails at start-up, not on the first call
    transport = new BrowserTransport({ ...browserOptions(env), ...extra, origin });
  } else {
    throw new RangeError(
      `Cannot start as 'UPSTREAM' must be live, origin:URL or archive:PATH: current value is ${upstream}`,
    );
  }
  const record = env.get("UPSTREAM_RECORD");
  return record ? new RecordingTransport(transport, record) : transport;
}

function browserOptions(env: Env): BrowserOptions {
  const list = env.get("UPSTREAM_PROXIES") ?? env.get("HTTP_PROXY") ?? "";
  const proxies = list.split(",").map((s) => s.trim()).filter(Boolean);
  const operatorCookies: Record<string, string> = {};
  for (const code of MARKETPLACE_CODES) {
    const cookie = env.get(`UPSTREAM_COOKIES_${code}`);
    if (cookie) operatorCookies[code] = cookie;
  }
  return { proxies, operatorCookies };
}
