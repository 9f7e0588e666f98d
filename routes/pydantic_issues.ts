/**
 * SPEC.md's 422 speaks pydantic (FastAPI's `detail` entries): zod's issues in pydantic's `type`
 * and `msg` words, for the query parameters (validate_query.ts) and the watch body alike.
 */
export type Failure = { type: string; msg: string };

/**
 * The issues a client is told of, one field's at a time as pydantic reports them: a value of the
 * wrong type is only that (zod also ran the list's `max(3)` on the string "price" and reported
 * "at most 3 characters"), and an integer's own bound, ±2^53 - 1, which zod checks for every
 * `z.int()`, gives way to the field's documented one (probe EA: `every_seconds: 1e20` was first
 * told to be at most 9007199254740991).
 */
export function reportedIssues<T extends { code: string; path: PropertyKey[] }>(issues: T[]): T[] {
  const at = (i: T) => JSON.stringify(i.path.map(String));
  const typed = new Set(issues.filter((i) => i.code === "invalid_type").map(at));
  const bounded = new Set(issues.filter((i) => !safeIntegerBound(i)).map(at));
  return issues.filter((i) =>
    typed.has(at(i)) ? i.code === "invalid_type" : !(safeIntegerBound(i) && bounded.has(at(i)))
  );
}

function safeIntegerBound(issue: object): boolean {
  const i = issue as { code?: string; maximum?: unknown; minimum?: unknown };
  return (i.code === "too_big" && i.maximum === Number.MAX_SAFE_INTEGER) ||
    (i.code === "too_small" && i.minimum === Number.MIN_SAFE_INTEGER);
}

/** One zod issue in pydantic's words. */
export function describeIssue(issue: Record<string, unknown>): Failure {
  switch (issue.code) {
    case "too_small":
    case "too_big":
      return bound(issue, BOUNDS[issue.code]);
    case "invalid_format":
      return {
        type: "string_pattern_mismatch",
        msg: `String should match pattern '${patternText(issue.pattern)}'`,
      };
    case "invalid_value": {
      const values = (issue.values as unknown[]).map((v) => `'${v}'`);
      const list = values.length > 1
        ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`
        : values[0];
      return { type: "enum", msg: `Input should be ${list}` };
    }
    case "invalid_type":
      return TYPE_WORDS[String(issue.expected)] ??
        { type: "value_error", msg: String(issue.message ?? "Invalid value") };
    case "unrecognized_keys":
      return { type: "extra_forbidden", msg: "Extra inputs are not permitted" };
    default:
      return { type: "value_error", msg: String(issue.message ?? "Invalid value") };
  }
}

/** pydantic's words for a bound, by what is bounded: a string's length, a list's, a number. */
const BOUNDS = {
  too_small: {
    limit: "minimum",
    length: "at least",
    value: "greater than or equal to",
    types: ["string_too_short", "too_short", "greater_than_equal"],
  },
  too_big: {
    limit: "maximum",
    length: "at most",
    value: "less than or equal to",
    types: ["string_too_long", "too_long", "less_than_equal"],
  },
} as const;

function bound(issue: Record<string, unknown>, b: (typeof BOUNDS)[keyof typeof BOUNDS]): Failure {
  const n = issue[b.limit];
  if (issue.origin === "string") {
    return { type: b.types[0], msg: `String should have ${b.length} ${plural(n, "character")}` };
  }
  if (issue.origin === "array") {
    return {
      type: b.types[1],
      msg: `List should have ${b.length} ${plural(n, "item")} after validation`,
    };
  }
  return { type: b.types[2], msg: `Input should be ${b.value} ${n}` };
}

const TYPE_WORDS: Record<string, Failure> = {
  string: { type: "string_type", msg: "Input should be a valid string" },
  int: { type: "int_type", msg: "Input should be a valid integer" },
  number: { type: "int_type", msg: "Input should be a valid integer" },
  array: { type: "list_type", msg: "Input should be a valid list" },
  object: { type: "dict_type", msg: "Input should be a valid dictionary" },
};

export const MISSING: Failure = { type: "missing", msg: "Field required" };

function plural(n: unknown, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** zod reports a pattern as "/source/flags"; pydantic shows the bare source. */
function patternText(pattern: unknown): string {
  return String(pattern ?? "").replace(/^\/(.*)\/[a-z]*$/, "$1");
}
