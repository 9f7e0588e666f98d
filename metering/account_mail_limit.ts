/**
 * At most ACCOUNT_MAIL_LIMIT account mails (sign-up confirmation, "already registered", password
 * reset) per address an hour, and CLIENT_MAIL_LIMIT per client (see routes/client_address.ts),
 * shared by every instance on the store. Without the first, anyone could make the operator's mail
 * server send an address as many mails as they can post forms: a mail bomb for its owner. Without
 * the second, one client could send a confirmation to every address on a list: spam under the
 * operator's name, and a pending sign-up stored for each.
 */
import { KV } from "./kv_layout.ts";
import { type Client, clientWindows, reserveSlots, windowOf } from "./window_slots.ts";

export const ACCOUNT_MAIL_LIMIT = 3;
export const CLIENT_MAIL_LIMIT = 20;
export const ACCOUNT_MAIL_WINDOW_MS = 60 * 60 * 1000;

/**
 * An address's two budgets. Every mail of `account` (sign-up confirmation, "already registered",
 * reset) gives an account's owner a way in: a reset link, or the confirmation of a new one. Alert
 * address confirmations, which a signed-in stranger may ask for any address, have their own: on
 * the one budget, three a stranger asked for left no reset mail for the owner that hour (probe CQ).
 */
export type MailBudget = "account" | "alert_address";

/**
 * Takes one of the client's and one of the address's mails for this hour; false when either has
 * had them all (a refused client takes none of the address's). An unknown client: the address only.
 */
export async function reserveAccountMail(
  kv: Deno.Kv,
  email: string,
  client: Client,
  now: number,
  budget: MailBudget = "account",
): Promise<boolean> {
  const byAddress = windowOf(
    email,
    budget === "account" ? KV.accountMails : KV.alertAddressMails,
    ACCOUNT_MAIL_LIMIT,
  );
  const byClient = clientWindows(client, KV.clientMails, CLIENT_MAIL_LIMIT);
  return (await reserveSlots(kv, [...byClient, byAddress], ACCOUNT_MAIL_WINDOW_MS, now)) === null;
}
