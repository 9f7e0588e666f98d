/**
 * What every route handler is given: the store, the clock, the data source and the services
 * built over them. app.ts builds it; routes only read it.
 */
import type { Clock } from "../metering/clock.ts";
import type { Plans } from "../metering/plans.ts";
import type { Accounts } from "../metering/accounts.ts";
import type { Meter } from "../metering/meter.ts";
import type { DataSource } from "../upstream/data_source.ts";
import type { AlertDelivery } from "../mail/alert_delivery.ts";
import type { SmtpConfig } from "../mail/smtp.ts";
import type { Metrics } from "../core/metrics.ts";
import type { Log } from "../core/log.ts";
import type { Watches } from "../watches/mod.ts";

/** SIGNUP: who may create an account from the dashboard. */
export type SignupMode = "open" | "closed" | "verify";

export interface Deps {
  kv: Deno.Kv;
  /** The local store's file (KV_PATH), which /readyz checks is still the one opened. */
  storeFile?: string;
  plans: Plans;
  clock: Clock;
  dataSource: DataSource;
  accounts: Accounts;
  meter: Meter;
  log: Log;
  /** Sends usage alerts by SMTP; null without SMTP_URL (alerts then wait in the store). */
  delivery: AlertDelivery | null;
  /** SMTP settings for the dashboard's own mails (sign-up confirmation, password reset). */
  mailer: SmtpConfig | null;
  signup: SignupMode;
  /** Proxies of the operator's in front (TRUST_PROXY); 0: X-Forwarded-* are the client's word. */
  trustProxy: number;
  /** The origin users reach (PUBLIC_URL): links in mails, and https there means Secure cookies. */
  publicUrl: string;
  /** Aborted when a drain runs out of time: calls still waiting upstream give up, uncharged. */
  stopping: AbortSignal;
  metrics: Metrics;
  /** Watch settings, refresh scheduler and webhook delivery (/v1/watches). */
  watches: Watches;
}
