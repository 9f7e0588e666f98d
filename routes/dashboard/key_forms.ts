/**
 * The create-key form is sent once. Its value can be shown only in the answer to the POST that
 * created it, so the page cannot redirect to a GET; a reload or a step back then forward resends
 * the form, and Chromium does so without asking (probe BS): each resend made another live key.
 * Every rendering of the form carries a random id; the first POST with it claims it in the store
 * (a checked commit, so two processes cannot both claim it), later ones are refused.
 */
import { KV } from "../../metering/kv_layout.ts";
import { randomHex } from "../../metering/api_key.ts";

/** A claim outlives any reload of the page that sent it; the id is random, so none repeats. */
const CLAIM_MS = 24 * 3600 * 1000;
const FORM_ID = /^[0-9a-f]{32}$/;

export function newKeyFormId(): string {
  return randomHex(16);
}

/**
 * Whether this POST may create a key: true for a form id not sent before (now claimed), false for
 * one already claimed. A form without an id (one rendered before ids existed, a script) or with a
 * malformed one is not tracked and may create.
 */
export async function claimKeyForm(
  kv: Deno.Kv,
  accountId: string,
  formId: string,
): Promise<boolean> {
  if (!FORM_ID.test(formId)) return true;
  const key = KV.keyForm(accountId, formId);
  const r = await kv.atomic().check({ key, versionstamp: null }).set(key, true, {
    expireIn: CLAIM_MS,
  }).commit();
  return r.ok;
}

/** Gives a claim back when its key was not created (a plan's limit, say), so a resend may try. */
export async function releaseKeyForm(kv: Deno.Kv, accountId: string, formId: string) {
  if (FORM_ID.test(formId)) await kv.delete(KV.keyForm(accountId, formId));
}
