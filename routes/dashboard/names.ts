/** The form field that carries the CSRF token. */
export const CSRF_FIELD_NAME = "_csrf";
