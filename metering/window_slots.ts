/**
 * A fixed window of slots in KV, shared by every instance on the store: at most `limit` slots per
 * key within `windowMs` of the window's first one. A slot is taken by an atomic check-and-increment
 * before the work it guards, so a parallel burst cannot take more than the limit.
 */
import { hashKey } from "./api_key.ts";
import { setBounded } from "../core/bounded_map.ts";
import { KeyTurns } from "../core/key_turns.ts";

interface Window {
  count: number;
  since: number;
}

/** Full windows remembered per store; past this, the oldest is forgotten. */
const MAX_FULL = 100_000;

/**
 * Per store (tests open many in one process): the windows this process saw full, until when, so
 * that a caller refused by one waits for no turn and commits nothing; and its callers' turns at
 * each window. A full window is still read before refusing: a password reset empties the email's
 * window while it is full (signin_lockout.ts clearAttempts), in whichever process it is made, and
 * the note alone kept the owner locked out with the new password for the rest of the 15 minutes
 * (test writer T29).
 */
const stores = new WeakMap<Deno.Kv, { full: Map<string, number>; turns: KeyTurns }>();

function storeState(kv: Deno.Kv) {
  let state = stores.get(kv);
  if (!state) stores.set(kv, state = { full: new Map(), turns: new KeyTurns() });
  return state;
}

/**
 * Takes one slot under `key`; false when the window's slots are all taken. This process's callers
 * of one window go one at a time, each with one read and one commit: all at once, a burst of N
 * sign-ins from one client made each of the window's slots cost about N commits that failed their
 * check, through SQLite's one writer, and every call that wrote to the store waited behind them,
 * for minutes after the burst (probe Y: 32,000 requests, paid calls 3–7 s for 3 minutes).
 */
async function reserveSlot(
  kv: Deno.Kv,
  key: Deno.KvKey,
  limit: number,
  windowMs: number,
  now: number,
): Promise<boolean> {
  const id = key.map(String).join("\u0000");
  const { full, turns } = storeState(kv);
  /** The window as stored while it runs, else null. */
  const live = (w: Window | null) => (w && now - w.since < windowMs ? w : null);

  /** Whether the window this process saw full still is; a window emptied meanwhile is forgotten. */
  const stillFull = async () => {
    if ((full.get(id) ?? 0) <= now) return false;
    let cur: Window | null;
    try {
      cur = live((await kv.get<Window>(key)).value);
    } catch {
      return true; // a store that cannot be read: refusing is the safe answer, as it was
    }
    if (cur && cur.count >= limit) return true;
    full.delete(id);
    return false;
  };

  const takeSlot = async () => {
    for (let tries = 0; tries < 50; tries++) {
      const cur = await kv.get<Window>(key);
      const running = live(cur.value);
      if (running && running.count >= limit) {
        setBounded(full, id, running.since + windowMs, MAX_FULL);
        return false;
      }
      const next: Window = running
        ? { count: running.count + 1, since: running.since }
        : { count: 1, since: now };
      const left = next.since + windowMs - now;
      try {
        const r = await kv.atomic().check(cur).set(key, next, { expireIn: Math.max(1, left) })
          .commit();
        if (r.ok) return true;
      } catch {
        // "database is locked" under contention: if the write landed after all, the re-read
        // counts it and this caller takes one more slot, which errs on the refusing side.
      }
      await new Promise((r) => setTimeout(r, Math.random() * 2 * Math.min(tries, 10)));
    }
    return false; // too contended: refusing is the safe answer
  };

  if (await stillFull()) return false;
  return await turns.run(id, async () => (await stillFull()) ? false : await takeSlot());
}

/**
 * Who a request came from (routes/client_address.ts): its address, an IPv6 client's /64, and for
 * IPv6 also the /48 around it, the block a site is commonly given. Either may be unknown.
 */
export interface Client {
  address: string | null;
  network: string | null;
}

/** A request whose client cannot be told: only the other windows count it. */
export const NO_CLIENT: Client = { address: null, network: null };

/**
 * A /48 may use this many times one client's limit: its 65,536 /64s would otherwise each get a
 * whole allowance, and /48s are free from tunnel brokers.
 */
export const NETWORK_FACTOR = 4;

/** One window a caller takes a slot of: its key and how many slots it has. */
export interface Slots {
  key: Deno.KvKey;
  limit: number;
}

/**
 * The window kept under `key(SHA-256 of value)`, or null when there is no value (a client that
 * could not be told: reserveSlots passes it over). Windows are keyed by digest so that the store
 * holds no email or client address.
 */
export function windowOf(
  value: string | null,
  key: (digest: string) => Deno.KvKey,
  limit: number,
): Slots | null {
  return value === null ? null : { key: key(hashKey(value)), limit };
}

/** A client's windows under `key`: its /48's (NETWORK_FACTOR × `limit`), then its own. */
export function clientWindows(
  client: Client,
  key: (digest: string) => Deno.KvKey,
  limit: number,
): (Slots | null)[] {
  return [
    windowOf(client.network, key, limit * NETWORK_FACTOR),
    windowOf(client.address, key, limit),
  ];
}

/**
 * Takes a slot of each window in turn (a client's before an address's, say), all of the same
 * length; the first that had none left, or null when every one gave a slot. A window that refuses
 * stops the turn, so the windows after it are not charged for a refused caller. A null window
 * (no client known) is passed over.
 */
export async function reserveSlots(
  kv: Deno.Kv,
  windows: readonly (Slots | null)[],
  windowMs: number,
  now: number,
): Promise<Slots | null> {
  for (const w of windows) {
    if (w && !(await reserveSlot(kv, w.key, w.limit, windowMs, now))) return w;
  }
  return null;
}
