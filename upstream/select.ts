/**
 * The data source an UPSTREAM setting names (INTERFACE.md): `live`, `origin:URL` or
 * `archive:PATH`, with `UPSTREAM_RECORD` wrapping the first two in a WARC recorder, and the
 * proxies (`UPSTREAM_PROXIES`, else `HTTP_PROXY`) and operator sessions (`UPSTREAM_COOKIES_<CODE>`)
 * of the environment.
 */
import { isStoreFile } from "../core/kv_files.ts";
import type { DataSource } from "./data_source.ts";
import type { Transport } from "./transport.ts";
import { ArchiveTransport } from "./archive_transport.ts";
import { type BrowserOptions, BrowserTransport } from "./browser_transport.ts";
import { RECORD_MAX_MB, RecordingTransport } from "./warc_recorder.ts";
import { UpstreamSource } from "./source.ts";
import { inlineReader, type PageReader } from "./page_pool.ts";
import { MARKETPLACE_CODES } from "../schemas/marketplaces.ts";
import { redactUrl } from "../core/redact_url.ts";

type Env = { get(name: string): string | undefined; toObject?(): Record<string, string> };

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
  const mode = checkUpstream(upstream, env);
  if (mode.kind === "archive") return new ArchiveTransport(mode.path, extra.log);
  const transport = new BrowserTransport({
    ...browserOptions(env),
    ...extra,
    ...(mode.kind === "origin" ? { origin: mode.origin } : {}),
  });
  const record = env.get("UPSTREAM_RECORD");
  return record
    ? new RecordingTransport(transport, record, extra.log, recordMaxBytes(env))
    : transport;
}

export type UpstreamMode =
  | { kind: "live" }
  | { kind: "origin"; origin: string }
  | { kind: "archive"; path: string };

/**
 * UPSTREAM and the settings it uses (proxies, operator cookies), checked before anything is
 * opened: each error names its setting and what is wrong, and never echoes a URL's credentials
 * or a cookie. `origin:` takes an http(s) URL with a host; `archive:` a file or folder that
 * exists; a proxy an http(s) or socks5 URL; a cookie one header value (no line break or control
 * character).
 */
export function checkUpstream(
  upstream: string,
  env: Env = Deno.env,
  /** The store's SQLite file (a local KV_PATH), which no recording may write into. */
  kvFile?: string,
): UpstreamMode {
  checkCookies(env);
  if (upstream.startsWith("archive:")) {
    const path = upstream.slice("archive:".length);
    try {
      if (!path) throw new Error("no path after archive:");
      Deno.statSync(path);
    } catch (e) {
      throw new RangeError(
        `Cannot start as 'UPSTREAM' names an archive that cannot be read: ${withoutPath(e)}`,
      );
    }
    // Replaying fetches nothing to record: the setting was taken and nothing written (probe EZ).
    if (env.get("UPSTREAM_RECORD")) {
      throw new RangeError(
        "Cannot start as 'UPSTREAM_RECORD' records fetched pages, and an archive: upstream fetches none",
      );
    }
    return { kind: "archive", path };
  }
  let mode: UpstreamMode;
  if (upstream === "live") {
    mode = { kind: "live" };
  } else if (upstream.startsWith("origin:")) {
    const origin = upstream.slice("origin:".length);
    const u = httpUrl(origin, ["http:", "https:"]);
    if (typeof u === "string") {
      throw new RangeError(
        `Cannot start as 'UPSTREAM' must be origin: followed by an http(s) URL: ${u}`,
      );
    }
    mode = { kind: "origin", origin };
  } else {
    throw new RangeError(
      `Cannot start as 'UPSTREAM' must be live, origin:URL or archive:PATH: current value is ${
        JSON.stringify(redactUrl(upstream))
      }`,
    );
  }
  const proxySetting = proxySettingOf(env) ?? "UPSTREAM_PROXIES";
  proxyList(env).forEach((proxy, i) => {
    const u = httpUrl(proxy, ["http:", "https:", "socks5:", "socks5h:"]);
    let why = typeof u === "string" ? u : null;
    if (!why) {
      try {
        Deno.createHttpClient({ proxy: { url: proxy } }).close();
      } catch (e) {
        why = (e as Error).message.split("\n")[0];
      }
    }
    if (why) {
      throw new RangeError(
        `Cannot start as '${proxySetting}' entry ${
          i + 1
        } must be an http(s) or socks5 proxy URL: ${why}`,
      );
    }
  });
  const record = env.get("UPSTREAM_RECORD");
  if (record) {
    // Probe CP: the store's -wal file took the recording and lost it at the next stop.
    if (kvFile && isStoreFile(record, kvFile)) {
      throw new RangeError(
        "Cannot start as 'UPSTREAM_RECORD' names the store (KV_PATH) or one of its side files",
      );
    }
    // Opened for writing, a FIFO waits for a reader: start-up hung without a word (probe CP).
    const kind = (() => {
      try {
        return Deno.statSync(record);
      } catch {
        return null; // made below
      }
    })();
    if (kind && !kind.isFile) {
      throw new RangeError("Cannot start as 'UPSTREAM_RECORD' must name a regular file");
    }
    try {
      // Only the operator reads it: it holds pages fetched with the operator's signed-in cookies.
      Deno.openSync(record, { append: true, create: true, mode: 0o600 }).close();
    } catch (e) {
      throw new RangeError(
        `Cannot start as 'UPSTREAM_RECORD' names a file that cannot be appended to: ${
          withoutPath(e)
        }`,
      );
    }
  }
  recordMaxBytes(env);
  return mode;
}

/**
 * The operator sessions: one Cookie header value each, for a marketplace that exists. An unknown
 * code (`UPSTREAM_COOKIES_GB`; the UK's is UK) was left unused without a word (probe EZ).
 */
function checkCookies(env: Env): void {
  for (const [name, value] of Object.entries(env.toObject?.() ?? {})) {
    // Empty is unset, as for every setting.
    const code = name.startsWith("UPSTREAM_COOKIES_") && value ? name.slice(17) : null;
    if (code !== null && !(MARKETPLACE_CODES as readonly string[]).includes(code)) {
      throw new RangeError(
        `Cannot start as '${name.slice(0, 40)}' names no marketplace: the codes are ${
          MARKETPLACE_CODES.join(", ")
        }`,
      );
    }
  }
  for (const code of MARKETPLACE_CODES) {
    const name = `UPSTREAM_COOKIES_${code}`;
    // deno-lint-ignore no-control-regex
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(env.get(name) ?? "")) {
      throw new RangeError(
        `Cannot start as '${name}' must be one Cookie header value: it holds a line break or control character`,
      );
    }
  }
}

/**
 * A file error's first line without the path it quotes (`…: stat '/x'`): a URL given where a
 * path belongs carried its password into the message (probe EZ).
 */
function withoutPath(e: unknown): string {
  // The quoted path cut first, to the end: a path ending in a line break left its first line
  // ending in the path (probe FA).
  return (e as Error).message.replace(/:\s*[a-z]+ '[\s\S]*$/, "").split("\n")[0];
}

/** UPSTREAM_RECORD_MAX_MB in bytes: a whole number of MiB from 1 to 1,048,576 (1 TiB). */
function recordMaxBytes(env: Env): number {
  const raw = env.get("UPSTREAM_RECORD_MAX_MB");
  if (raw === undefined || raw === "") return RECORD_MAX_MB * 1024 * 1024;
  const mb = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!(mb >= 1 && mb <= 1_048_576)) {
    throw new RangeError(
      `Cannot start as 'UPSTREAM_RECORD_MAX_MB' must be a whole number of MiB from 1 to 1048576: current value is ${
        JSON.stringify(raw.slice(0, 40))
      }`,
    );
  }
  return mb * 1024 * 1024;
}

/** The URL, or why it is not one of `schemes` with a host; the reason never holds the value. */
function httpUrl(value: string, schemes: string[]): URL | string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return "the value given is not a valid URL (host name, port or %-escape)";
  }
  if (!schemes.includes(u.protocol)) return `its scheme is not ${schemes.join(", ")}`;
  if (!u.hostname) return "it names no host";
  return u;
}

/**
 * Where the upstream proxies are read, the first set winning. The runtime's own fetch takes a
 * proxy from the environment's HTTPS_PROXY (and the others) by itself: left to it, one was used
 * unchecked and unsaid, its credentials sent to the marketplace inside the tunnel (probe DK).
 * Read here, it is checked, and used as any proxy of the list is (with proxy_relay.ts).
 */
const PROXY_SETTINGS = [
  "UPSTREAM_PROXIES",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
];

/** The first of PROXY_SETTINGS that is set. */
function proxySettingOf(env: Env): string | undefined {
  return PROXY_SETTINGS.find((n) => env.get(n));
}

/** The proxies' setting and how many it lists, for the start-up line; null when none is set. */
export function proxiesSet(env: Env = Deno.env): { setting: string; count: number } | null {
  const setting = proxySettingOf(env);
  return setting ? { setting, count: proxyList(env).length } : null;
}

/** `host:port`, with `user:pass@` or not, an IPv6 literal in brackets, and a trailing slash. */
const BARE_PROXY = /^(?:[^\s/@#?\\]+@)?(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?\/?$/i;

function proxyList(env: Env): string[] {
  const name = proxySettingOf(env);
  const list = name ? env.get(name)! : "";
  // `proxy.corp.example:3128`, without a scheme, is an http proxy, as curl and the runtime read it
  // (probe DO: such a value, common in /etc/environment, stopped start-up).
  // Only a bare `host:port` (with userinfo or not) is read so: `http:/host` or `socks5:/host`, typed
  // wrong, stay refused rather than become a proxy at host "http" (probe DR).
  return list.split(",").map((s) => s.trim()).filter(Boolean)
    .map((s) => (BARE_PROXY.test(s) ? `http://${s}` : s));
}

function browserOptions(env: Env): BrowserOptions {
  const proxies = proxyList(env);
  const operatorCookies: Record<string, string> = {};
  for (const code of MARKETPLACE_CODES) {
    const cookie = env.get(`UPSTREAM_COOKIES_${code}`);
    if (cookie) operatorCookies[code] = cookie;
  }
  return { proxies, operatorCookies };
}
