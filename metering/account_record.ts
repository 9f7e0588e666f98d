/**
 * The account record's shape as data (account_state.ts has it as types), for what reads records
 * the meter did not write: a restored backup. A record with `used: "lots"` was restored as it
 * was, and then every call was admitted without a limit, `X-Credits-Remaining` read NaN, and a
 * date field that was no number made the admin list answer 503 (probe CP).
 */
import { z } from "zod";

const DAY_MS = 86_400_000;
/**
 * A time the meter can have written: not before 1970, not past tomorrow (a little clock skew).
 * Finite was not enough: a period start of 1e16 ms made every call of the account, and the admin
 * list of every account, a 503 ("Invalid time value"), and one of 1e15 a period that never ends
 * (probe GH). Read when a record is checked, so "tomorrow" is the restore's.
 */
const time = z.number().finite().min(0).refine((t) => t <= Date.now() + DAY_MS, {
  message: "is a time later than tomorrow",
});
/** A rate window's second, in seconds, bounded as `time` is. */
const second = z.number().finite().min(0).refine((s) => s * 1000 <= Date.now() + DAY_MS, {
  message: "is a second later than tomorrow",
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
