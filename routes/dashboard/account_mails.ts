/**
 * The dashboard's account mails (confirmation, reset, alert address): each asked for within the
 * account mail limits (metering/account_mail_limit.ts), made and sent after the answer.
 */
import type { Context } from "hono";
import type { Deps } from "../deps.ts";
import { type MailBudget, reserveAccountMail } from "../../metering/account_mail_limit.ts";
import { clientAddress } from "../client_address.ts";
import { type Mail, sendMail } from "../../mail/smtp.ts";
import { throttledError } from "../../core/log.ts";

export interface AccountMails {
  /**
   * Stores what a mail needs and sends it, after the answer: neither the store write nor the
   * mail server may show in the answer's time, which would tell whether the address has an account.
   */
  later(what: string, make: () => Promise<Mail>): void;
  /**
   * Whether this client may have `email` sent one more account mail this hour. Asked for every
   * well-formed address, whether it has an account or not, so that the answer's time tells
   * neither.
   */
  may(c: Context, email: string, budget?: MailBudget): Promise<boolean>;
}

export function accountMails(deps: Deps): AccountMails {
  const refused = throttledError(
    deps.log,
    "account mail not sent: the address or client has had its mails for this hour",
  );
  return {
    later(what, make) {
      const send = async () => {
        const m = await make();
        if (deps.mailer) await sendMail(deps.mailer, m);
      };
      // Started after a timer, once the answer is on its way: even opening the mail connection
      // costs time before the answer otherwise.
      setTimeout(
        () =>
          send().catch((e) => deps.log.error(`${what} failed`, e instanceof Error ? e.message : e)),
        0,
      );
    },
    async may(c, email, budget) {
      const client = clientAddress(c, deps.trustProxy);
      if (await reserveAccountMail(deps.kv, email, client, deps.clock.now(), budget)) return true;
      refused();
      return false;
    },
  };
}
