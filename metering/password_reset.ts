/**
 * Password reset links: the one the dashboard mails ("Forgot password", "already registered"),
 * and the one the operator hands to an account's owner (admin API and CLI), which is how an
 * account gets its first password, or a new one, where no mail server is set: the dashboard's
 * "ask the operator" had nothing the operator could do (probe FU). The link carries a single-use
 * token of an hour (email_tokens.ts), void once the account's password changes.
 */
import { issueToken, TOKEN_TTL_MS } from "./email_tokens.ts";
import { readCredential } from "./passwords.ts";

export interface PendingReset {
  account_id: string;
  email: string;
  /** The password epoch the link was issued under; links of earlier versions have none. */
  epoch?: number;
}

/** A reset token for the account `accountId` of `email`, void once its password changes. */
export async function issueResetToken(
  kv: Deno.Kv,
  accountId: string,
  email: string,
  now: number,
): Promise<string> {
  const epoch = (await readCredential(kv, accountId))?.epoch ?? 0;
  const payload: PendingReset = { account_id: accountId, email, epoch };
  return await issueToken(kv, "reset", payload, now);
}

/** The dashboard page where a reset token chooses a new password. */
export function resetLink(publicUrl: string, token: string): string {
  return `${publicUrl}/dashboard/reset?token=${token}`;
}

/** A reset link for the operator to hand over: the link and when it stops working. */
export async function operatorResetLink(
  kv: Deno.Kv,
  account: { id: string; email: string },
  publicUrl: string,
  now: number,
): Promise<{ account_id: string; url: string; expires_at: string }> {
  const token = await issueResetToken(kv, account.id, account.email, now);
  return {
    account_id: account.id,
    url: resetLink(publicUrl, token),
    expires_at: new Date(now + TOKEN_TTL_MS.reset).toISOString(),
  };
}
