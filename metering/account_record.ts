/**
 * The account record's shape as data (account_state.ts has it as types), for what reads records
 * the meter did not write: a restored backup. A record with `used: "lots"` was restored as it
 * was, and then every call was admitted without a limit, `X-Credits-Remaining` read NaN, and a
 * date field that was no number made the admin list answer 503 (probe CP).
 */
import { z } from "zod";
import { type AccountState, periodAt } from "./account_state.ts";

/**
 * How far ahead of the wall clock a restored time may lie: a year, for every entry
 * (cli/backup.ts). The service's clock never goes back while it runs (metering/clock.ts), so a
 * process that ran a day or more ahead before its clock was set right keeps writing times that far
 * ahead, and its backups were refused whole until the wall clock caught up (probe GO: "tomorrow"
 * was the bound). A year still refuses what no meter wrote: a period start of 1e16 ms made every
 * call of the account, and the admin list of every account, a 503 ("Invalid time value"), and one
 * of 1e15 a period that never ends (probe GH).
 */
export const AHEAD_MS = 366 * 86_400_000;
/** A time the meter can have written: not before 1970, not more than AHEAD_MS past the restore. */
const time = z.number().finite().min(0).refine((t) => t <= Date.now() + AHEAD_MS, {
  message: "is a time more than a year ahead",
});
/** A rate window's second, in seconds, bounded as `time` is. */
const second = z.number().finite().min(0).refine((s) => s * 1000 <= Date.now() + AHEAD_MS, {
  message: "is a second more than a year ahead",
});
const count = z.number().int().nonnegative();

const KeyRecord = z.object({
  id: z.string(),
  name: z.string(),
  mode: z.enum(["live", "test"]),
  prefix: z.string(),
  last4: z.string(),
  status: z.enum(["active", "revoked"]),
  created_at: time,
  revoked_at: time.nullable(),
  last_used_at: time.nullable(),
  win_sec: second,
  win_count: count,
});

export const AccountRecord = z.object({
  id: z.string(),
  email: z.string(),
  plan: z.string(),
  status: z.enum(["active", "inactive"]),
  created_at: time,
  plan_started_at: time,
  period_start: time,
  used: count,
  keys: z.record(z.string(), KeyRecord),
  recent_batches: z.array(z.string()).optional(),
  daily: z.record(z.string(), z.number().int()).optional(),
  by_key: z.record(z.string(), z.number().int()).optional(),
  by_endpoint: z.record(z.string(), z.number().int()).optional(),
  carried_from: z.array(time).optional(),
  alerted: z.array(z.number()).optional(),
  key_once: z.array(z.string()).optional(),
  retired_window: z.object({ sec: second, count }).optional(),
}).passthrough();

/**
 * A restored account record with no time later than `now`, the restore's: times up to a year ahead
 * are taken (AHEAD_MS), but a rate window ahead held the key at 429 until the clock reached it,
 * since the meter opens a window only past the stored one; a window a revoked key left ahead held
 * every new key the same way; and a period starting ahead did not roll for up to a year (probe GU).
 * Windows ahead are dropped (at most a second of calls is forgotten), other times ahead become now,
 * and a period starting ahead becomes the one that holds now. Credits used stay as they were.
 */
export function broughtToNow(record: AccountState, now: number): AccountState {
  const at = (t: number) => Math.min(t, now);
  const atOrNull = (t: number | null) => t === null ? null : at(t);
  const second = Math.floor(now / 1000);
  const keys = Object.fromEntries(
    Object.entries(record.keys).map(([id, k]) => [id, {
      ...k,
      created_at: at(k.created_at),
      revoked_at: atOrNull(k.revoked_at),
      last_used_at: atOrNull(k.last_used_at),
      ...(k.win_sec > second ? { win_sec: 0, win_count: 0 } : {}),
    }]),
  );
  const out: AccountState = {
    ...record,
    created_at: at(record.created_at),
    plan_started_at: at(record.plan_started_at),
    keys,
  };
  if (record.period_start > now) out.period_start = periodAt(out.plan_started_at, now).start;
  if (record.carried_from) out.carried_from = record.carried_from.map(at);
  if (record.retired_window && record.retired_window.sec > second) delete out.retired_window;
  return out;
}
