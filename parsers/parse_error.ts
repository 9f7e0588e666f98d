/**
 * The one failure a parser throws. `reason` is machine-readable, `message` a one-line sentence.
 * The route turns it into an uncharged 502 `upstream_error` (or 503/404 for the reasons below).
 */
export type ParseFailureReason =
  | "blocked" // robot check, captcha, sign-in wall, "dogs of Amazon" 503
  | "not_found" // Amazon's own 404 page ("dogs of Amazon" 404), unknown ASIN
  | "empty" // empty or non-HTML body
  | "unrecognised" // markup this parser does not know
  | "incomplete"; // a page of the right type lacking the fields the response needs

export class ParseError extends Error {
  readonly reason: ParseFailureReason;
  constructor(reason: ParseFailureReason, message: string) {
    super(message);
    this.name = "ParseError";
    this.reason = reason;
  }
}
