/**
 * The account record's shape as data (account_state.ts has it as types), for what reads records
 * the meter did not write: a restored backup. A record with `used: "lots"` was restored as it
 * was, and then every call was admitted without a limit, `X-Credits-Remaining` read NaN, and a
 * date field that was no number made the admin list answer 503 (probe CP).
 */
import { z } from "zod";

const time = z.number().finite();
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
  win_sec: time,
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
  retired_window: z.object({ sec: time, count }).optional(),
}).passthrough();
