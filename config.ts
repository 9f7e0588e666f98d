/**
 * Settings from the environment (INTERFACE.md), read once at start-up. An empty value is the same
 * as an unset one; anything else must be exactly what README "Configuration" documents, or start-up
 * ends with one line naming the setting (never echoing a secret) and exit code 1.
 */
import { builtinPlans, parsePlans, type Plans, SIGNUP_PLAN } from "./metering/plans.ts";
import { type CorsOrigins, parseCorsOrigins } from "./routes/methods.ts";
import type { SignupMode } from "./routes/deps.ts";
import { parseSmtpUrl } from "./mail/smtp.ts";
import { redactUrl, withoutUserInfo } from "./core/redact_url.ts";
import { CommitTurns, takeTurns } from "./core/commit_turns.ts";
import { commitLockFile, folderOf, pathExists } from "./core/kv_files.ts";
import { consoleLog } from "./core/log.ts";
import { within } from "./core/within.ts";
import { readAtMostSync } from "./core/read_at_most.ts";
import { unfinishedRestore } from "./metering/unfinished_restore.ts";
import { adoptLayout } from "./metering/store_layout.ts";
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

type Env = { get(name: string): string | undefined };

/** A setting's value: an empty value is the same as an unset one (README "Configuration"). */
function setting(env: Env, name: string): string | undefined {
  const v = env.get(name);
  return v === "" ? undefined : v;
}

export function loadConfig(env: Env = Deno.env): Config {
  const port = portFrom(setting(env, "PORT"));
  const plansFile = setting(env, "PLANS_FILE");
  const smtpUrl = setting(env, "SMTP_URL");
  const smtpFrom = setting(env, "SMTP_FROM");
  // Checked here, before the store is opened: a bad SMTP_URL creates no KV file.
  if (smtpUrl) checkSmtp(smtpUrl, smtpFrom);
  const plans = plansFile ? plansFrom(plansFile) : builtinPlans();
  const signup = signupFrom(setting(env, "SIGNUP"), !!smtpUrl);
  // Sign-ups start on "free": without it every one failed, told its address was not valid.
  if (signup !== "closed" && !plans.get(SIGNUP_PLAN)) {
    throw new RangeError(
      `Cannot start as 'SIGNUP' is ${signup}, and sign-ups start on the plan "${SIGNUP_PLAN}", which 'PLANS_FILE' does not list: add it, or set SIGNUP=closed`,
    );
  }
  return {
    port,
    host: hostFrom(setting(env, "HOST")),
    kvPath: kvPathFrom(env),
    upstream: setting(env, "UPSTREAM") ?? "live",
    resultCache: onOffFrom("RESULT_CACHE", setting(env, "RESULT_CACHE")),
    adminToken: adminTokenFrom(setting(env, "ADMIN_TOKEN")),
    plans,
    smtp: smtpUrl ? { url: smtpUrl, from: smtpFrom } : undefined,
    signup,
    trustProxy: trustProxyFrom(setting(env, "TRUST_PROXY")),
    publicUrl: publicUrlFrom(setting(env, "PUBLIC_URL"), port),
    corsOrigins: parseCorsOrigins(setting(env, "CORS_ORIGINS")),
    drainSeconds: drainFrom(
      setting(env, "DRAIN_SECONDS"),
      env.get("DENO_DEPLOYMENT_ID") ? DEPLOY_DRAIN_SECONDS : 10,
    ),
    parseWorkers: workersFrom(setting(env, "PARSE_WORKERS")),
    history: onOffFrom("HISTORY", setting(env, "HISTORY")),
    watchMinSeconds: watchMinFrom(setting(env, "WATCH_MIN_SECONDS")),
    webhookAllowPrivate: flagFrom("WEBHOOK_ALLOW_PRIVATE", setting(env, "WEBHOOK_ALLOW_PRIVATE")),
  };
}

/** SMTP_URL parsed as the mailer will parse it; its errors name the setting, never the value. */
function checkSmtp(url: string, from: string | undefined): void {
  try {
    parseSmtpUrl(url, from);
  } catch (e) {
    throw new RangeError(`Cannot start as ${whyNot(e)}`);
  }
}

/** Decimal digits only: no sign, no spaces, no hex, no exponent. */
function digits(value: string): number | null {
  return /^[0-9]{1,10}$/.test(value) ? Number(value) : null;
}

/** PORT: 0 to 65535 in decimal digits (0: a free port the system picks). */
function portFrom(value: string | undefined): number {
  if (value === undefined) return 8000;
  const n = digits(value);
  if (n === null || n > 65535) {
    throw new RangeError(
      `Cannot start as 'PORT' must be a port number from 0 to 65535 in decimal digits: current value is ${
        JSON.stringify(value)
      }`,
    );
  }
  return n;
}

/**
 * HOST: an IPv4 address, an IPv6 address, or a host name (looked up when the server binds; an
 * address this machine does not have, or a name that does not resolve, fails then, naming HOST).
 */
export function hostFrom(value: string | undefined): string {
  if (value === undefined) return "0.0.0.0";
  const refuse = () =>
    new RangeError(
      `Cannot start as 'HOST' must be an IPv4 or IPv6 address or a host name: current value is ${
        JSON.stringify(value)
      }`,
    );
  if (/^[0-9.]+$/.test(value)) {
    const parts = value.split(".");
    if (parts.length !== 4 || parts.some((p) => !/^[0-9]{1,3}$/.test(p) || Number(p) > 255)) {
      throw refuse();
    }
    return value;
  }
  if (value.includes(":")) {
    const bare = value.replace(/^\[(.*)\]$/, "$1");
    if (!/^[0-9A-Fa-f:.]+$/.test(bare)) throw refuse();
    try {
      new URL(`http://[${bare}]/`);
    } catch {
      throw refuse();
    }
    return bare;
  }
  const label = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
  if (value.length > 253 || !new RegExp(`^${label}(?:\\.${label})*\\.?$`).test(value)) {
    throw refuse();
  }
  return value;
}

/** A plan catalog is a few KB; more than this is a mistake (or /dev/zero), not a catalog. */
export const MAX_PLANS_FILE_BYTES = 1024 * 1024;

function plansFrom(file: string): Plans {
  const text = readPlansFile(file);
  let plans: Plans;
  try {
    plans = parsePlans(text);
  } catch (e) {
    const issue = (e as { issues?: { path: unknown[]; message: string }[] }).issues?.[0];
    const why = issue
      ? `${issue.path.join(".") || "(top)"}: ${issue.message}`
      : (e as Error).message.split("\n")[0];
    throw new RangeError(
      `Cannot start as 'PLANS_FILE' is not a plan catalog (INTERFACE.md): ${why}`,
    );
  }
  // The catalog schema keeps the last of two plans with one id: an edit gone wrong, refused.
  const seen = new Set<string>();
  for (const p of (JSON.parse(text) as { plans: { id: string }[] }).plans) {
    if (seen.has(p.id)) {
      throw new RangeError(
        `Cannot start as 'PLANS_FILE' is not a plan catalog (INTERFACE.md): plan id ${
          JSON.stringify(p.id)
        } appears twice`,
      );
    }
    seen.add(p.id);
  }
  return plans;
}

/** A regular file of at most MAX_PLANS_FILE_BYTES: a device, a FIFO or a huge file is refused. */
function readPlansFile(file: string): string {
  const cannot = (why: string) =>
    new RangeError(`Cannot start as 'PLANS_FILE' cannot be read: ${why.split("\n")[0]}`);
  let f: Deno.FsFile | undefined;
  try {
    // stat before open: opening a FIFO for reading waits for a writer.
    const info = Deno.statSync(file);
    if (!info.isFile) throw cannot(`${file} is not a regular file`);
    if (info.size > MAX_PLANS_FILE_BYTES) {
      throw cannot(`${file} is larger than ${MAX_PLANS_FILE_BYTES} bytes`);
    }
    f = Deno.openSync(file, { read: true });
    // A file that grew since the stat is refused all the same.
    const bytes = readAtMostSync(f, MAX_PLANS_FILE_BYTES);
    if (!bytes) throw cannot(`${file} is larger than ${MAX_PLANS_FILE_BYTES} bytes`);
    return new TextDecoder().decode(bytes);
  } catch (e) {
    if (e instanceof RangeError) throw e;
    throw cannot((e as Error).message);
  } finally {
    f?.close();
  }
}

/** An on/off setting (HISTORY, RESULT_CACHE): unset is on; anything but on or off is refused. */
function onOffFrom(name: string, value: string | undefined): boolean {
  if (value === undefined || value === "on") return true;
  if (value === "off") return false;
  throw new RangeError(
    `Cannot start as '${name}' must be on or off: current value is ${JSON.stringify(value)}`,
  );
}

/** PARSE_WORKERS: the number of cores unless told; 0 parses on the serving thread. */
function workersFrom(value: string | undefined): number {
  if (value === undefined) return Math.max(1, navigator.hardwareConcurrency ?? 1);
  const n = digits(value);
  if (n === null || n > 256) {
    throw new RangeError(
      `Cannot start as 'PARSE_WORKERS' must be a whole number from 0 to 256: current value is ${
        JSON.stringify(value)
      }`,
    );
  }
  return n;
}

/**
 * DRAIN_SECONDS unset on Deno Deploy. Deploy sends SIGINT on every idle stop, scale-down and
 * eviction and kills 5 s later: a 10 s drain was cut by the kill before the calls waiting upstream
 * were refunded, so they stayed charged (probe FY). Two seconds leave the refunds and the last
 * lines three.
 */
export const DEPLOY_DRAIN_SECONDS = 2;

/** DRAIN_SECONDS: seconds in decimal digits, a decimal fraction allowed (`0.5`), 0 to 3600. */
function drainFrom(value: string | undefined, unset: number): number {
  if (value === undefined) return unset;
  const n = /^[0-9]{1,4}(\.[0-9]{1,3})?$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0 && n <= 3600)) {
    throw new RangeError(
      `Cannot start as 'DRAIN_SECONDS' must be a number of seconds from 0 to 3600: current value is ${
        JSON.stringify(value)
      }`,
    );
  }
  return n;
}

/** The admin API's bearer token; a short one could be guessed over the network (issue 13.15). */
export const MIN_ADMIN_TOKEN = 24;
export const MIN_ADMIN_TOKEN_CHARS = 8;

/** Never echoed: only its length, or what kind of character is wrong in it, is named. */
function adminTokenFrom(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  // deno-lint-ignore no-control-regex
  if (/[\s\x00-\x1f\x7f]/.test(value)) {
    throw new RangeError(
      "Cannot start as 'ADMIN_TOKEN' must not contain spaces, line breaks or control characters (a Bearer token is one word)",
    );
  }
  if (value.length < MIN_ADMIN_TOKEN) {
    throw new RangeError(
      `Cannot start as 'ADMIN_TOKEN' must have at least ${MIN_ADMIN_TOKEN} characters: current value has ${value.length}`,
    );
  }
  // Clients send headers as bytes, and a token of "€" never matched from a UTF-8 client: the
  // admin API and /metrics were shut to everyone (probe AS).
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new RangeError(
      "Cannot start as 'ADMIN_TOKEN' must be printable ASCII (letters, digits, punctuation)",
    );
  }
  // A repeated word is guessed first: "adminadminadminadminadmin" was accepted (probe AS).
  const distinct = new Set(value).size;
  if (distinct < MIN_ADMIN_TOKEN_CHARS) {
    throw new RangeError(
      `Cannot start as 'ADMIN_TOKEN' must use at least ${MIN_ADMIN_TOKEN_CHARS} different characters: current value uses ${distinct} (try: openssl rand -hex 32)`,
    );
  }
  return value;
}

/** Closed without a mail server, `verify` with one; `open` only when the operator says so. */
function signupFrom(value: string | undefined, mail: boolean): SignupMode {
  if (value === undefined) return mail ? "verify" : "closed";
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
    `Cannot start as 'SIGNUP' must be closed, verify or open: current value is ${
      JSON.stringify(value)
    }`,
  );
}

/** TRUST_PROXY: unset or 0 is none; 1 (INTERFACE.md) or up to 10 proxies in a chain. */
function trustProxyFrom(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = digits(value);
  if (n === null || n > 10) {
    throw new RangeError(
      `Cannot start as 'TRUST_PROXY' must be 1 (one proxy in front), a number of proxies up to 10, or unset: current value is ${
        JSON.stringify(value)
      }`,
    );
  }
  return n;
}

/** A 0/1 setting: unset or 0 is off, 1 is on, anything else a start-up error. */
function flagFrom(name: string, value: string | undefined): boolean {
  if (value === undefined || value === "0") return false;
  if (value === "1") return true;
  throw new RangeError(
    `Cannot start as '${name}' must be 1, 0 or unset: current value is ${JSON.stringify(value)}`,
  );
}

/** WATCH_MIN_SECONDS: whole seconds from 1 to 30 days; default an hour. */
function watchMinFrom(value: string | undefined): number {
  if (value === undefined) return 3_600;
  const n = digits(value);
  if (n === null || n < 1 || n > 30 * 86_400) {
    throw new RangeError(
      `Cannot start as 'WATCH_MIN_SECONDS' must be a whole number of seconds from 1 to 2592000: current value is ${
        JSON.stringify(value)
      }`,
    );
  }
  return n;
}

function publicUrlFrom(value: string | undefined, port: number): string {
  if (value === undefined) return `http://localhost:${port}`;
  // Why, as the value shown leaves out what may be wrong with it (a password, a query).
  const refuse = (why = "not a URL") =>
    new RangeError(
      `Cannot start as 'PUBLIC_URL' must be an http(s) origin (${why}): current value is ${
        redactUrl(value)
      }`,
    );
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw refuse();
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw refuse("another scheme");
  if (u.username || u.password) throw refuse("it holds a user name or password");
  if (u.pathname !== "/" || u.search) throw refuse("it has a path or query");
  return u.origin;
}

/** KV_PATH as given; on Deno Deploy (no KV_PATH) the platform's KV; elsewhere the local file. */
function kvPathFrom(env: Env): string | undefined {
  const given = setting(env, "KV_PATH");
  if (given) {
    // deno-lint-ignore no-control-regex -- a line break would split the start-up line
    if (/[\x00-\x1f\x7f]/.test(given)) {
      throw new RangeError(
        "Cannot start as 'KV_PATH' must be a file path or URL on one line: it holds a control character",
      );
    }
    // Deno opens `file:///x` as a relative path, made as directories named `file:` (probe CP).
    if (/^file:/i.test(given)) {
      throw new RangeError("Cannot start as 'KV_PATH' must be a file path, not a file: URL");
    }
    // Deno takes only a lower-case scheme for a remote store: `HTTPS://u:p@host/` would be opened
    // as a file, its directories (credentials included) created in the working directory.
    if (/^https?:\/\//i.test(given) && !/^https?:\/\//.test(given)) {
      throw new RangeError(
        "Cannot start as 'KV_PATH' must write a KV Connect URL's scheme in lower case (https://)",
      );
    }
    return given;
  }
  if (env.get("DENO_DEPLOYMENT_ID")) return undefined;
  return "./data/shelf.kv";
}

/** The SQLite file a KV_PATH names, or undefined for the platform's KV, a URL or memory. */
export function localKvFile(kvPath: string | undefined): string | undefined {
  return kvPath && kvPath !== ":memory:" && !/^https?:\/\//.test(kvPath) ? kvPath : undefined;
}

/**
 * The store a KV_PATH names, or why it cannot be used; the open is probed by a write and a read.
 * `turnsWaitMs` is how long a commit waits for its turn on a shared file (CommitTurns).
 */
/**
 * How long start-up waits to write the store while another program holds its lock: the write
 * waits for as long as the lock is held, and a process kept silent, not listening, for as long
 * as another program held the file (45 s seen, probe DQ).
 */
export const STORE_WAIT_MS = 15_000;

export async function openStore(
  kvPath: string | undefined,
  turnsWaitMs?: number,
  waitMs = STORE_WAIT_MS,
  /** Whether a store that holds nothing yet is marked with this version's layout (the server). */
  markEmpty = true,
): Promise<Deno.Kv> {
  // A KV Connect URL may carry credentials: never printed, nor left inside Deno's own message.
  const where = kvPath === undefined ? "the platform's KV" : redactUrl(kvPath);
  const reason = (e: unknown) =>
    withoutUserInfo(kvPath ? whyNot(e).replaceAll(kvPath, where) : whyNot(e));
  let kv: Deno.Kv;
  const file = localKvFile(kvPath);
  let created = false;
  try {
    if (file) {
      // A new store and its directory are the owner's alone: they hold webhook secrets and the
      // digests of keys and passwords. An existing one keeps the mode its operator gave it.
      const dir = folderOf(file);
      if (dir) await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      created = !(await pathExists(file));
    }
    kv = await Deno.openKv(kvPath);
    // Named by the file's real path, so that processes reaching it through a symlink take turns
    // on the same file (spelled as given, they did not; probe AH).
    if (file) {
      const real = await Deno.realPath(file).catch(() => file);
      const lockFile = commitLockFile(real);
      takeTurns(
        kv,
        new CommitTurns(lockFile, (e) =>
          consoleLog.error(
            `cannot open ${lockFile}: processes sharing the store will not take turns to commit:`,
            e,
          ), turnsWaitMs),
      );
    }
    if (file && created) {
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        await Deno.chmod(f, 0o600).catch(() => {}); // absent, or a system without modes
      }
    }
  } catch (e) {
    throw new StoreError(`Cannot open the store at ${where}: ${reason(e)}`);
  }
  const waiting = setTimeout(
    () =>
      consoleLog.error(
        `the store at ${where} is locked by another program: waiting up to ${waitMs / 1000} s`,
      ),
    Math.min(2_000, waitMs / 2),
  );
  let timedOut = false;
  try {
    // A read-only or corrupt file can open and fail only at its first write.
    const probe = ["startup_probe"];
    const write = (async () => {
      const written = await kv.set(probe, Date.now());
      if (!written.ok) throw new Error("the probe write was refused");
      await kv.get(probe);
      await kv.delete(probe);
    })();
    await within(write, waitMs, () => {
      timedOut = true;
      return new Error(`another program held its lock for ${waitMs / 1000} s`);
    });
  } catch (e) {
    // Closing waits for the write still queued behind the lock: left open, the exit that follows
    // ends it (a CLI or server that cannot start exits 1).
    if (!timedOut) kv.close();
    throw new StoreError(`Cannot write to the store at ${where}: ${reason(e)}`);
  } finally {
    clearTimeout(waiting);
  }
  const refused = await unfinishedRestore(kv) ?? await adoptLayout(kv, { markEmpty });
  if (refused) {
    kv.close();
    throw new StoreError(`Cannot use the store at ${where}: ${refused}`);
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

function whyNot(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0];
}
