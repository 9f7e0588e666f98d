/**
 * Settings from the environment (INTERFACE.md), read once at start-up.
 */
import { builtinPlans, parsePlans, type Plans } from "./metering/plans.ts";

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
  signup: "open" | "closed";
}

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
    signup: signupFrom(env.get("SIGNUP")),
  };
}

function signupFrom(value: string | undefined): "open" | "closed" {
  if (value === undefined || value === "" || value === "open") return "open";
  if (value === "closed") return "closed";
  throw new RangeError(`Cannot start as 'SIGNUP' must be 'open' or 'closed': current value is ${value}`);
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
