/**
 * Which layout of keys and values a store holds. An older version started on a store a newer one
 * wrote misreads what changed between them (README "Upgrading": key id entries answered 503 to
 * revokes, webhook events were dropped as gone) and could only be told not to in the README. Each
 * version from this one marks the store with its layout when it opens it, and refuses a store of
 * a later layout than its own, naming both.
 */
import { KV } from "./kv_layout.ts";
import { whileLocked } from "../core/lock_backoff.ts";

/**
 * The layout this version reads and writes. Raise it with every change of keys or values that an
 * earlier version would misread, and say so in README "Upgrading".
 */
export const STORE_LAYOUT = 1;

/**
 * Marks the store with this version's layout; why it must not be used, or null. With `markEmpty`
 * false (the admin CLI), a store that holds nothing yet is left unmarked: marked, it was "not
 * empty" to an older version's restore, the roll-back README "Upgrading" describes (probe HK);
 * the next server or command to open it once it holds something marks it.
 */
export async function adoptLayout(
  kv: Deno.Kv,
  opts: { markEmpty?: boolean; own?: number } = {},
): Promise<string | null> {
  const own = opts.own ?? STORE_LAYOUT;
  for (let tries = 0; tries < 3; tries++) {
    const held = await kv.get(KV.storeLayout);
    const layout = held.value;
    if (layout !== null && !(Number.isSafeInteger(layout) && (layout as number) >= 0)) {
      return "its layout mark is not a layout number: it was not written by Shelf";
    }
    if (layout !== null && (layout as number) > own) {
      return `it was written by a newer version of Shelf (store layout ${layout}; this version reads layout ${own} and earlier): run that version or a later one, or restore a backup taken before the upgrade into a new store`;
    }
    if (layout === own) return null;
    if (layout === null && opts.markEmpty === false && await holdsNothing(kv)) return null;
    const done = await whileLocked(() => kv.atomic().check(held).set(KV.storeLayout, own).commit());
    if (done.ok) return null;
    // Another process marked it meanwhile: read again.
  }
  return null;
}

/**
 * Whether the store holds no state: at most its layout mark and the entries of servers running
 * on it, neither of which a backup keeps. Restore asks it too: it may run beside such servers.
 */
export async function holdsNothing(kv: Deno.Kv): Promise<boolean> {
  for await (const { key } of kv.list({ prefix: [] })) {
    if (key[0] !== KV.instances[0] && key[0] !== KV.storeLayout[0]) return false;
  }
  return true;
}
