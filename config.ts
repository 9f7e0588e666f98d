/**
 * Settings from the environment (INTERFACE.md), read once at start-up.
 */
import { builtinPlans, parsePlans, type Plans } from "./metering/plans.ts";
import { type CorsOrigins, parseCorsOrigins } from "./routes/methods.ts";

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
  /** TRUST_PROXY=1: X-Forwarded-Proto/-Host/-For come from a proxy of the operator's. */
  trustProxy: boolean;
  /** PUBLIC_URL: the origin users reach, for links in mails and the Secure cookie flag. */
  publicUrl: string;
  corsOrigins: CorsOrigins;
}

export type SignupMode = "open" | "closed" | "verify";

export function loadConfig(env: { get(name: string): string | undefined } = Deno.env): Config {
  const port = Number(env.get("PORT") ?? "8000");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`Cannot start as 'PORT' must be a port number: current value is ${env.get("PORT")}`);
  }
  const plansFile = env.get("PLANS_FILE");
  return {
    port,
    host: env.get("HOST") ?? "0.0.0.0",
    kvPath: kvPathFrom(env),
    upstream: env.get("UPSTREAM") ?? "live",
    resultCache: env.get("RESULT_CACHE") !== "off",
    adminToken: env.get("ADMIN_TOKEN") || undefined,
    plans: plansFile ? parsePlans(Deno.readTextFileSync(plansFile)) : builtinPlans(),
    smtp: env.get("SMTP_URL") ? { url: env.get("SMTP_URL")!, from: env.get("SMTP_FROM") || undefined } : undefined,
    signup: signupFrom(env.get("SIGNUP"), !!env.get("SMTP_URL")),
    trustProxy: trustProxyFrom(env.get("TRUST_PROXY")),
    publicUrl: publicUrlFrom(env.get("PUBLIC_URL"), port),
    corsOrigins: parseCorsOrigins(env.get("CORS_ORIGINS")),
  };
}

/** Closed without a mail server, `verify` with one; `open` only when the operator says so. */
function signupFrom(value: string | undefined, mail: boolean): SignupMode {
  if (value === undefined || value === "") return mail ? "verify" : "closed";
  if (value === "open" || value === "closed") return value;
  if (value === "verify") {
    if (!mail) throw new RangeError("Cannot start as 'SIGNUP' is verify, which mails a link, but 'SMTP_URL' is not set");
    return value;
  }
  throw new RangeError(`Cannot start as 'SIGNUP' must be closed, verify or open: current value is ${value}`);
}

function trustProxyFrom(value: string | undefined): boolean {
  if (value === undefined || value === "" || value === "0") return false;
  if (value === "1") return true;
  throw new RangeError(`Cannot start as 'TRUST_PROXY' must be 1 or unset: current value is ${value}`);
}

function publicUrlFrom(value: string | undefined, port: number): string {
  if (!value) return `http://localhost:${port}`;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new RangeError(`Cannot start as 'PUBLIC_URL' must be an http(s) origin: current value is ${value}`);
  }
  if ((u.protocol !== "https:" && u.protocol !== "http:") || u.pathname !== "/" || u.search || u.username) {
    throw new RangeError(`Cannot start as 'PUBLIC_URL' must be an http(s) origin: current value is ${value}`);
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

/** Opens the store a KV_PATH names, creating the folder of a local file. */
export async function openStore(kvPath: string | undefined): Promise<Deno.Kv> {
  if (kvPath && kvPath !== ":memory:" && !/^https?:\/\//.test(kvPath)) {
    const dir = kvPath.replace(/[^/]*$/, "");
    if (dir) await Deno.mkdir(dir, { recursive: true });
  }
  return await Deno.openKv(kvPath);
}
