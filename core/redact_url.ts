/** Settings and messages that name a URL must not echo the credentials inside it. */

/**
 * A URL without its user name and password, as the URL parser reads it (the user info ends at
 * the LAST "@" before the host). A value the parser refuses, or reads without user info although
 * it holds an "@" (`origin:http://u:p@host` is an opaque path to it), loses everything from its
 * "scheme://" up to that "@" all the same: a message may say less, never a password. A parsed
 * URL's query goes too, as it may hold a token.
 */
export function redactUrl(value: string): string {
  if (!value.includes("@") && !value.includes("?")) return value;
  try {
    const u = new URL(value);
    if (u.username || u.password || u.search) {
      u.username = "";
      u.password = "";
      u.search = ""; // a query may carry a token (`?token=…`)
      return u.href;
    }
  } catch {
    // cut below
  }
  return value.includes("@") ? value.replace(/^(.*?:\/\/)?.*@/s, "$1") : value;
}

/**
 * Free text (an error's message) with the user info of every URL in it cut, or replaced by
 * `shown`: through the last "@" of the word, as a URL parser ends user info at its last "@".
 */
export function withoutUserInfo(text: string, shown = ""): string {
  return text.includes("@") ? text.replace(USER_INFO, `$1${shown}`) : text;
}
const USER_INFO = /([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#]*@/g;
