/**
 * Settings from the environment (INTERFACE.md), read once at start-up.
 */
import { builtinPlans, parsePlans, type Plans } from "./metering/plans.ts";
import { type CorsOrigins, parseCorsOrigins } from "./routes/methods.ts";
import type { SignupMode } from "./routes/deps.ts";
export type { SignupMode };

export interface Config {
  port: number;
  host: string;
  kvPath: string | undefined;
  upstream: string;
  /** Repeats within an endpoint's TTL are answered from KV (RESULT_CACHE=off disables). */
  resultCache: boolean;
  adminToken: string | undefined;
  plans: Plans;
  smtp: { url: string; from?: string } | undefined;
  signup: SignupMode;
  /**
   * TRUST_PROXY: how many proxies of the operator's stand in front (0: none). Behind any, their
   * X-Forwarded-Proto/-Host are believed, and the X-Forwarded-For entry the outermost one added.
   */
  trustProxy: number;
  /** PUBLIC_URL: the origin users reach, for links in mails and the Secure cookie flag. */
  publicUrl: string;
  corsOrigins: CorsOrigins;
  /** DRAIN_SECONDS: how long calls in flight may finish after SIGTERM/SIGINT. */
  drainSeconds: number;
  /** PARSE_WORKERS: page workers; 0 parses on the serving thread. */
  parseWorkers: number;
  /** HISTORY: record price history from details fetches (default on). */
  history: boolean;
  /** WATCH_MIN_SECONDS: the shortest refresh interval of a watch (default 3600). */
  watchMinSeconds: number;
  /** WEBHOOK_ALLOW_PRIVATE=1: webhooks may target private and loopback addresses. */
  webhookAllowPrivate: boolean;
}

export function loadConfig(env: { get(name: string): string | undefined } = Deno.env): Config {
  const port = Number(env.get("PORT") ?? "8000");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(
      `Cannot start as 'PORT' must be a port number: current value is ${env.get("PORT")}`,
    );
  }
  const plansFile = env.get("PLANS_FILE");
  return {
    port,
    host: env.get("HOST") ?? "0.0.0.0",
    kvPath: kvPathFrom(env),
    upstream: env.get("UPSTREAM") ?? "live",
    resultCache: env.get("RESULT_CACHE") !== "off",
    adminToken: adminTokenFrom(env.get("ADMIN_TOKEN")),
    plans: plansFile ? plansFrom(plansFile) : builtinPlans(),
    smtp: env.get("SMTP_URL")
      ? { url: env.get("SMTP_URL")!, from: env.get("SMTP_FROM") || undefined }
      : undefined,
    signup: signupFrom(env.get("SIGNUP"), !!env.get("SMTP_URL")),
    trustProxy: trustProxyFrom(env.get("TRUST_PROXY")),
    publicUrl: publicUrlFrom(env.get("PUBLIC_URL"), port),
    corsOrigins: parseCorsOrigins(env.get("CORS_ORIGINS")),
    drainSeconds: drainFrom(env.get("DRAIN_SECONDS")),
    parseWorkers: workersFrom(env.get("PARSE_WORKERS")),
    history: historyFrom(env.get("HISTORY")),
    watchMinSeconds: watchMinFrom(env.get("WATCH_MIN_SECONDS")),
    webhookAllowPrivate: flagFrom("WEBHOOK_ALLOW_PRIVATE", env.get("WEBHOOK_ALLOW_PRIVATE")),
  };
}

function plansFrom(file: string): Plans {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (e) {
    throw new RangeError(
      `Cannot start as 'PLANS_FILE' cannot be read: ${(e as Error).message.split("\n")[0]}`,
    );
  }
  try {
    return parsePlans(text);
  } catch (e) {
    const issue = (e as { issues?: { path: unknown[]; message: string }[] }).issues?.[0];
    const why = issue
      ? `${issue.path.join(".") || "(top)"}: ${issue.message}`
      : (e as Error).message.split("\n")[0];
    throw new RangeError(
      `Cannot start as 'PLANS_FILE' is not a plan catalog (INTERFACE.md): ${why}`,
    );
  }
}

/** HISTORY: `on` (default) or `off`; off records nothing and /v1/products/history answers 404. */
function historyFrom(value: string | undefined): boolean {
  if (value === undefined || value === "" || value === "on") return true;
  if (value === "off") return false;
  throw new RangeError(`Cannot start as 'HISTORY' must be on or off: current value is ${value}`);
}

/** PARSE_WORKERS: the number of cores unless told; 0 parses on the serving thread. */
function workersFrom(value: string | undefined): number {
  if (value === undefined || value === "") return Math.max(1, navigator.hardwareConcurrency ?? 1);
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 256) {
    throw new RangeError(
      `Cannot start as 'PARSE_WORKERS' must be a whole number from 0 to 256: current value is ${value}`,
    );
  }
  return n;
}

function drainFrom(value: string | undefined): number {
  if (value === undefined || value === "") return 10;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 3600) {
    throw new RangeError(
      `Cannot start as 'DRAIN_SECONDS' must be a number of seconds from 0 to 3600: current value is ${value}`,
    );
  }
  return n;
}

/** The admin API's bearer token; a short one could be guessed over the network (issue 13.15). */
export const MIN_ADMIN_TOKEN = 24;

function adminTokenFrom(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.length < MIN_ADMIN_TOKEN) {
    throw new RangeError(
      `Cannot start as 'ADMIN_TOKEN' must have at least ${MIN_ADMIN_TOKEN} characters: current value has ${value.length}`,
    );
  }
  return value;
}

/** Closed without a mail server, `verify` with one; `open` only when the operator says so. */
function signupFrom(value: string | undefined, mail: boolean): SignupMode {
  if (value === undefined || value === "") return mail ? "verify" : "closed";
  if (value === "open" || value === "closed") return value;
  if (value === "verify") {
    if (!mail) {
      throw new RangeError(
        "Cannot start as 'SIGNUP' is verify, which mails a link, but 'SMTP_URL' is not set",
      );
    }
    return value;
  }
  throw new RangeError(
    `Cannot start as 'SIGNUP' must be closed, verify or open: current value is ${value}`,
  );
}

/** TRUST_PROXY: unset, "" or 0 is none; 1 (INTERFACE.md) or up to 10 proxies in a chain. */
function trustProxyFrom(value: string | undefined): number {
  if (value === undefined || value === "") return 0;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 10) {
    throw new RangeError(
      `Cannot start as 'TRUST_PROXY' must be 1 (one proxy in front), a number of proxies up to 10, or unset: current value is ${value}`,
    );
  }
  return n;
}

/** A 0/1 setting: unset, "" or 0 is off, 1 is on, anything else a start-up error. */
function flagFrom(name: string, value: string | undefined): boolean {
  if (value === undefined || value === "" || value === "0") return false;
  if (value === "1") return true;
  throw new RangeError(`Cannot start as '${name}' must be 1 or unset: current value is ${value}`);
}

/** WATCH_MIN_SECONDS: whole seconds from 1 to 30 days; default an hour. */
function watchMinFrom(value: string | undefined): number {
  if (value === undefined || value === "") return 3_600;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 30 * 86_400) {
    throw new RangeError(
      `Cannot start as 'WATCH_MIN_SECONDS' must be a whole number of seconds from 1 to 2592000: current value is ${value}`,
    );
  }
  return n;
}

function publicUrlFrom(value: string | undefined, port: number): string {
  if (!value) return `http://localhost:${port}`;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new RangeError(
      `Cannot start as 'PUBLIC_URL' must be an http(s) origin: current value is ${value}`,
    );
  }
  if (
    (u.protocol !== "https:" && u.protocol !== "http:") || u.pathname !== "/" || u.search ||
    u.username
  ) {
    throw new RangeError(
      `Cannot start as 'PUBLIC_URL' must be an http(s) origin: current value is ${value}`,
    );
  }
  return u.origin;
}

/** KV_PATH as given; on Deno Deploy (no KV_PATH) the platform's KV; elsewhere the local file. */
function kvPathFrom(env: { get(name: string): string | undefined }): string | undefined {
  const given = env.get("KV_PATH");
  if (given) return given;
  if (env.get("DENO_DEPLOYMENT_ID")) return undefined;
  return "./data/shelf.kv";
}

/** The store a KV_PATH names, or why it cannot be used; the open is probed by a write and a read. */
export async function openStore(kvPath: string | undefined): Promise<Deno.Kv> {
  const where = kvPath ?? "the platform's KV";
  let kv: Deno.Kv;
  try {
    if (kvPath && kvPath !== ":memory:" && !/^https?:\/\//.test(kvPath)) {
      const dir = kvPath.replace(/[^/]*$/, "");
      if (dir) await Deno.mkdir(dir, { recursive: true });
    }
    kv = await Deno.openKv(kvPath);
  } catch (e) {
    throw new StoreError(`Cannot open the store at ${where}: ${reason(e)}`);
  }
  try {
    // A read-only or corrupt file can open and fail only at its first write.
    const probe = ["startup_probe"];
    const written = await kv.set(probe, Date.now());
    if (!written.ok) throw new Error("the probe write was refused");
    await kv.get(probe);
    await kv.delete(probe);
  } catch (e) {
    kv.close();
    throw new StoreError(`Cannot write to the store at ${where}: ${reason(e)}`);
  }
  return kv;
}

/** A store that cannot be opened or written: start-up ends with its message and exit code 1. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreError";
  }
}

function reason(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0];
}
