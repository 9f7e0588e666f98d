/**
 * The account record (see kv_layout.ts) and the pure rules over it: credit periods, usage
 * record, key views. Nothing here touches KV.
 */
import type { Plan } from "./plans.ts";
import type { KeyMode } from "./api_key.ts";

export const PERIOD_MS = 30 * 24 * 3600 * 1000;

export interface KeyState {
  id: string;
  name: string;
  mode: KeyMode;
  prefix: string;
  last4: string;
  status: "active" | "revoked";
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
  /** Fixed one-second rate window: the whole second (epoch seconds) and the calls admitted in it. */
  win_sec: number;
  win_count: number;
}

export interface AccountState {
  id: string;
  email: string;
  plan: string;
  status: "active" | "inactive";
  created_at: number;
  plan_started_at: number;
  /** Start of the period `used` belongs to; an older one means `used` is stale and counts as 0. */
  period_start: number;
  used: number;
  keys: Record<string, KeyState>;
  /** Ids of the last commits that wrote the record, so a commit whose reply was lost can tell it landed. */
  recent_batches: string[];
  /** Credits charged per UTC day ("2026-01-31") of the current period, for the dashboard's chart. */
  daily?: Record<string, number>;
  /** Credits charged in the current period per key id, and per endpoint name (dashboard, issue 14.11). */
  by_key?: Record<string, number>;
  by_endpoint?: Record<string, number>;
  /**
   * The start of the oldest earlier period whose usage plan changes carried into this one (one
   * entry; records written before kept up to four, the oldest among them): refunds of calls
   * charged in it or any period since still land here.
   */
  carried_from?: number[];
  /** Usage-alert thresholds (percent) already crossed in the current period: one alert each. */
  alerted?: number[];
  /** Alert settings; absent means both alerts on, sent to the account's email. */
  alerts?: AlertSettings;
  /**
   * Tokens of the last key creations that carried one (the dashboard's form id, cut short),
   * newest first, KEPT_ONCE_TOKENS at most: a create sent again with one of them is refused.
   */
  key_once?: string[];
  /**
   * The newest rate window a revoked key of the account had, the fullest of its second: a key
   * created then starts from it. A fresh window per new key let a free account revoke and create
   * its one key each time it was refused, 10 calls a second on a 1-a-second plan (probe ER).
   */
  retired_window?: { sec: number; count: number };
}

export interface AlertSettings {
  at80: boolean;
  at100: boolean;
  /** Where alerts go; null means the account's email. */
  email: string | null;
  /**
   * An address other than the account's own that its owner confirmed from a mailed link
   * (routes/dashboard/alert_address.tsx); absent in records of earlier versions.
   */
  confirmed?: string | null;
  /**
   * Counts settings saves and confirmations: a mailed confirmation link carries the count it was
   * asked under and is void once it moved on (a later address asked for, or saved).
   */
  asked?: number;
}

/**
 * Where the account's alerts are mailed: its alert address if that is the account's own or was
 * confirmed, else the account's own. An address stored without confirmation (saved while no mail
 * server was set, or by an earlier version) was mailed the alerts once one was (probe AH).
 */
export function alertRecipient(a: AccountState): string {
  const { email, confirmed } = alertSettings(a);
  return email !== null && (email === a.email || email === confirmed) ? email : a.email;
}

export const ALERT_THRESHOLDS = [80, 100] as const;

export function alertSettings(a: AccountState): AlertSettings {
  return a.alerts ?? { at80: true, at100: true, email: null };
}

/** The credit period containing `now`: 30-day steps from the plan's start. */
export function periodAt(planStartedAt: number, now: number): { start: number; end: number } {
  const n = Math.max(0, Math.floor((now - planStartedAt) / PERIOD_MS));
  const start = planStartedAt + n * PERIOD_MS;
  return { start, end: start + PERIOD_MS };
}

/** Moves `state` into the period containing `now`, resetting usage when a new period began. */
export function rollPeriod(state: AccountState, now: number): void {
  const { start } = periodAt(state.plan_started_at, now);
  if (start > state.period_start) {
    state.period_start = start;
    state.used = 0;
    state.daily = {};
    state.by_key = {};
    state.by_endpoint = {};
    state.alerted = [];
    delete state.carried_from;
  }
}

/** The UTC day of `ms` as "YYYY-MM-DD", the key of the per-day counters. */
export function dayOf(ms: number): string {
  // Every admitted call asks for it, and all calls of a day share the answer: format it once.
  const day = Math.floor(ms / 86_400_000);
  if (day !== lastDay) {
    lastDay = day;
    lastDayText = new Date(day * 86_400_000).toISOString().slice(0, 10);
  }
  return lastDayText;
}
let lastDay = NaN;
let lastDayText = "";

/** Whose call a charge or refund belongs to, for the per-key and per-endpoint tallies. */
export interface UsageTag {
  keyId: string;
  endpoint: string;
}

/**
 * Counts `credits` charged (negative: refunded) on the day of `now` and, when the call is
 * named, against its key and its endpoint.
 */
export function countUsage(
  state: AccountState,
  now: number,
  credits: number,
  tag?: UsageTag,
): void {
  const day = dayOf(now);
  add(state.daily ??= {}, day, credits);
  if (tag) {
    const byKey = state.by_key ??= {};
    let name = tag.keyId;
    if (!(name in byKey)) {
      const full = Object.keys(byKey).length >= MAX_KEY_TALLIES;
      // A key no longer in the record (revoked): counted with the other revoked keys once they
      // were folded together, or where they are about to be.
      if (!state.keys[name] && (full || FOLDED_KEYS in byKey)) name = FOLDED_KEYS;
      if (full && !(name in byKey)) foldRevoked(state);
    }
    add(byKey, name, credits);
    add(state.by_endpoint ??= {}, tag.endpoint, credits);
  }
}

/**
 * The tally of credits of keys since revoked and no longer in the record, once there were too
 * many to count apart: 2,697 keys made, used and revoked in one period took the record past
 * KV's 64 KiB and every call of the account failed until the period's end.
 */
export const FOLDED_KEYS = "revoked";
/** Keys counted apart in a period's `by_key` before revoked ones are folded together. */
export const MAX_KEY_TALLIES = 64;

function foldRevoked(state: AccountState): void {
  const byKey = state.by_key!;
  for (const [id, credits] of Object.entries(byKey)) {
    if (id === FOLDED_KEYS || state.keys[id]) continue;
    byKey[FOLDED_KEYS] = (byKey[FOLDED_KEYS] ?? 0) + credits;
    delete byKey[id];
  }
}

function add(counts: Record<string, number>, name: string, credits: number): void {
  const n = Math.max(0, (counts[name] ?? 0) + credits);
  if (n === 0) delete counts[name];
  else counts[name] = n;
}

/**
 * The alert thresholds that `used` has newly reached this period, marked as reached so that each
 * gives one alert per period whatever happens to `used` afterwards (refunds, concurrent batches).
 */
export function newlyCrossed(state: AccountState, plan: Plan | undefined): number[] {
  const included = plan?.credits ?? 0;
  if (included <= 0) return [];
  const alerted = state.alerted ??= [];
  const crossed = ALERT_THRESHOLDS.filter((t) =>
    !alerted.includes(t) && state.used * 100 >= included * t
  );
  alerted.push(...crossed);
  return crossed;
}

export function remaining(state: AccountState, plan: Plan | undefined): number {
  return Math.max(0, (plan?.credits ?? 0) - state.used);
}

export interface UsageRecord {
  plan: string;
  interval: string;
  status: string;
  included_requests: number;
  requests_used: number;
  requests_remaining: number;
  overage_requests: number;
  rate_limit_per_sec: number;
  period_start: string;
  period_end: string;
}

/** SPEC.md's usage record of an account already rolled to `now`'s period. */
export function usageRecord(state: AccountState, plan: Plan | undefined): UsageRecord {
  const included = plan?.credits ?? 0;
  return {
    plan: state.plan,
    interval: "month",
    status: state.status,
    included_requests: included,
    requests_used: state.used,
    requests_remaining: Math.max(0, included - state.used),
    overage_requests: Math.max(0, state.used - included),
    rate_limit_per_sec: plan?.rate_limit_per_sec ?? 0,
    period_start: new Date(state.period_start).toISOString(),
    period_end: new Date(state.period_start + PERIOD_MS).toISOString(),
  };
}

/** A key as the admin API and dashboard show it: never its value. */
export function keyView(k: KeyState) {
  return {
    id: k.id,
    name: k.name,
    mode: k.mode,
    prefix: k.prefix,
    last4: k.last4,
    status: k.status,
    created_at: new Date(k.created_at).toISOString(),
    last_used_at: k.last_used_at === null ? null : new Date(k.last_used_at).toISOString(),
    revoked_at: k.revoked_at === null ? null : new Date(k.revoked_at).toISOString(),
  };
}

export function accountView(a: AccountState) {
  return {
    id: a.id,
    email: a.email,
    plan: a.plan,
    status: a.status,
    created_at: new Date(a.created_at).toISOString(),
    plan_started_at: new Date(a.plan_started_at).toISOString(),
  };
}

export function activeKeyCount(a: AccountState): number {
  return Object.values(a.keys).filter((k) => k.status === "active").length;
}
