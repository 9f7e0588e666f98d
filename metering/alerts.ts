/**
 * Usage alerts in KV: written by the meter in the commit of the charge that crossed a threshold
 * (an alert record plus an outbox entry), then claimed, delivered and marked by the delivery
 * loop. A claim is a lease written with a versionstamp check, so two processes never send the
 * same alert at once, and an alert whose sender died is sent again once the lease runs out.
 */
import { KV } from "./kv_layout.ts";
import { type AccountState, alertRecipient, alertSettings, PERIOD_MS } from "./account_state.ts";
import type { Plan } from "./plans.ts";

export interface Alert {
  id: string;
  account_id: string;
  threshold: number;
  plan: string;
  included: number;
  used: number;
  period_start: number;
  period_end: number;
  to: string;
  created_at: number;
  status: "pending" | "delivered";
  attempts: number;
  next_attempt_at: number;
  lease_until: number;
  last_error: string | null;
  delivered_at: number | null;
}

/** The alert of `threshold` for the state as just charged, or null when the account turned it off. */
export function newAlert(
  state: AccountState,
  plan: Plan | undefined,
  threshold: number,
  now: number,
): Alert | null {
  const settings = alertSettings(state);
  if (threshold === 80 && !settings.at80) return null;
  if (threshold === 100 && !settings.at100) return null;
  return {
    // The account is part of the id: the outbox holds one entry per alert id, and accounts whose
    // periods began in the same millisecond (created together) shared one, so one account's
    // alerts were never sent (probe HN). Ids sort by period, then threshold.
    id: `alr_${String(state.period_start).padStart(15, "0")}_${
      String(threshold).padStart(3, "0")
    }_${state.id}`,
    account_id: state.id,
    threshold,
    plan: state.plan,
    included: plan?.credits ?? 0,
    used: state.used,
    period_start: state.period_start,
    period_end: state.period_start + PERIOD_MS,
    to: alertRecipient(state),
    created_at: now,
    status: "pending",
    attempts: 0,
    next_attempt_at: 0, // due at once; the delivery loop schedules retries on its own clock
    lease_until: 0,
    last_error: null,
    delivered_at: null,
  };
}

/** Adds the alert and its outbox entry to a commit. */
export function writeAlert(op: Deno.AtomicOperation, alert: Alert): void {
  op.set(KV.alert(alert.account_id, alert.id), alert).set(
    KV.outboxEntry(alert.id),
    alert.account_id,
  );
}

/** An account's alerts, newest first. */
export async function listAlerts(kv: Deno.Kv, accountId: string, limit = 50): Promise<Alert[]> {
  const out: Alert[] = [];
  for await (
    const e of kv.list<Alert>({ prefix: KV.alerts(accountId) }, { reverse: true, limit })
  ) out.push(e.value);
  return out;
}

/** The ids of the alerts in the outbox, oldest first, with their accounts. */
export async function outboxEntries(
  kv: Deno.Kv,
): Promise<{ accountId: string; alertId: string }[]> {
  const out: { accountId: string; alertId: string }[] = [];
  for await (const e of kv.list<string>({ prefix: KV.outbox })) {
    out.push({ accountId: e.value, alertId: e.key[e.key.length - 1] as string });
  }
  return out;
}

/**
 * Reserves the alert for `leaseMs` when it is due at `now` and nobody holds it; null otherwise.
 * The lease is written with a versionstamp check, so of two processes only one gets it.
 */
export async function claim(
  kv: Deno.Kv,
  accountId: string,
  alertId: string,
  now: number,
  leaseMs: number,
): Promise<Alert | null> {
  const e = await kv.get<Alert>(KV.alert(accountId, alertId));
  const a = e.value;
  if (!a) {
    await kv.delete(KV.outboxEntry(alertId));
    return null;
  }
  if (a.status !== "pending" || a.next_attempt_at > now || a.lease_until > now) return null;
  const leased: Alert = { ...a, lease_until: now + leaseMs };
  const r = await kv.atomic().check(e).set(KV.alert(a.account_id, a.id), leased).commit();
  return r.ok ? leased : null;
}

export async function markDelivered(kv: Deno.Kv, a: Alert, now: number): Promise<void> {
  const done: Alert = {
    ...a,
    status: "delivered",
    attempts: a.attempts + 1,
    delivered_at: now,
    lease_until: 0,
    last_error: null,
  };
  await kv.atomic().set(KV.alert(a.account_id, a.id), done).delete(KV.outboxEntry(a.id)).commit();
}

/**
 * Takes an alert out of the outbox unsent, saying why: its period is long over, so its news (80%
 * or 100% of credits that have since been renewed) would only mislead.
 */
export async function markLapsed(kv: Deno.Kv, a: Alert): Promise<void> {
  await markUnsent(kv, a, "not sent: its credit period had ended before a mail server took it");
}

/** Takes the alert out of the outbox unsent, saying why on the Usage page. */
export async function markUnsent(kv: Deno.Kv, a: Alert, why: string): Promise<void> {
  const unsent: Alert = { ...a, lease_until: 0, last_error: why };
  await kv.atomic().set(KV.alert(a.account_id, a.id), unsent).delete(KV.outboxEntry(a.id))
    .commit();
}

/** Records a failed attempt; the alert stays in the outbox until `retryAt`. */
export async function markFailed(
  kv: Deno.Kv,
  a: Alert,
  error: string,
  retryAt: number,
): Promise<void> {
  const failed: Alert = {
    ...a,
    attempts: a.attempts + 1,
    last_error: error.slice(0, 300),
    next_attempt_at: retryAt,
    lease_until: 0,
  };
  await kv.set(KV.alert(a.account_id, a.id), failed);
}
