/**
 * The create-key form is sent once. Its value can be shown only in the answer to the POST that
 * created it, so the page cannot redirect to a GET; a reload or a step back then forward resends
 * the form, and Chromium does so without asking (probe BS): each resend made another live key.
 * Every rendering of the form carries a random id; the key's creation records it in the account
 * (Accounts.createKey's `once`, in the same commit), and a creation sent again with it is refused.
 * Kept there, the last few only: kept as entries of their own, one per form sent, a create-and-
 * revoke loop grew the store by 170 MB a day (probe BZ).
 */
import { randomHex } from "../../metering/api_key.ts";

const FORM_ID = /^[0-9a-f]{32}$/;

export function newKeyFormId(): string {
  return randomHex(16);
}

/**
 * What the account keeps of a form id: 48 of its random bits, unique among the few kept. A form
 * without an id (one rendered before ids existed, a script) or with a malformed one is not
 * tracked and may create.
 */
export function keyFormToken(formId: string): string | undefined {
  return FORM_ID.test(formId) ? formId.slice(0, 12) : undefined;
}
