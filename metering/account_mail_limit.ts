/**
 * At most ACCOUNT_MAIL_LIMIT account mails (sign-up confirmation, "already registered", password
 * reset) per address an hour, shared by every instance on the store. Without it, anyone could
 * make the operator's mail server send an address as many mails as they can post forms: a mail
 * bomb for its owner, and a spam complaint against the operator's sender.
 */
import { KV } from "./kv_layout.ts";
import { hashKey } from "./api_key.ts";
import { reserveSlot } from "./window_slots.ts";

export const ACCOUNT_MAIL_LIMIT = 3;
export const ACCOUNT_MAIL_WINDOW_MS = 60 * 60 * 1000;

/** Takes one of the address's mails for this hour; false when it has had them all. */
export function reserveAccountMail(kv: Deno.Kv, email: string, now: number): Promise<boolean> {
  return reserveSlot(
    kv,
    KV.accountMails(hashKey(email)),
    ACCOUNT_MAIL_LIMIT,
    ACCOUNT_MAIL_WINDOW_MS,
    now,
  );
}
