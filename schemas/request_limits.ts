/**
 * Limits on request bodies that the API documents: the routes enforce them (routes/body_limit.ts)
 * and the OpenAPI document quotes them, so both read them from here.
 */

/** Dashboard forms: an e-mail, a password, a key name, a CSRF token. */
export const FORM_BODY_LIMIT = 16 * 1024;
/** Admin JSON and any other body. */
export const JSON_BODY_LIMIT = 64 * 1024;
/** How long a request body may take to arrive whole. */
export const BODY_SECONDS = 10;
