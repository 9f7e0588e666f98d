/**
 * Query string → typed parameters, or the 422 `detail` list of SPEC.md (one entry per failing
 * parameter, pydantic's `type`/`msg` vocabulary). The last value wins for a repeated parameter.
 */
import type { z } from "zod";
import type { Param } from "../schemas/params.ts";
import type { Query } from "./query_params.ts";
import { describeIssue, type Failure, reportedIssues } from "./pydantic_issues.ts";

export interface DetailEntry {
  loc: ["query", string];
  msg: string;
  type: string;
  input: unknown;
}

export type Validated =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; detail: DetailEntry[] };

const INT = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

// Every metered call validates its query: the parameter list and the answer for an absent
// parameter are the same on every call of an endpoint, so they are worked out once.
const entriesOf = new WeakMap<Record<string, Param>, [string, Param][]>();
const absentOf = new WeakMap<Param, { value: unknown } | { failure: Failure }>();

export function validateQuery(params: Record<string, Param>, query: Query): Validated {
  const value: Record<string, unknown> = {};
  const detail: DetailEntry[] = [];
  let entries = entriesOf.get(params);
  if (!entries) entriesOf.set(params, entries = Object.entries(params));
  for (const [name, param] of entries) {
    const all = query.get(name);
    const raw = all?.[all.length - 1];
    const result = validateOne(param, raw);
    if ("failure" in result) {
      detail.push({
        loc: ["query", name],
        msg: result.failure.msg,
        type: result.failure.type,
        input: raw ?? null,
      });
    } else if (result.value !== undefined) {
      value[name] = result.value;
    }
  }
  if (!detail.length) {
    for (const [name, param] of entries) {
      const other = param.atMost;
      if (
        other && value[name] !== undefined && value[other] !== undefined &&
        (value[name] as number) > (value[other] as number)
      ) {
        const raw = query.get(name)!;
        detail.push({
          loc: ["query", name],
          msg: `Input should be less than or equal to ${other} (${value[other]})`,
          type: "less_than_equal",
          input: raw[raw.length - 1],
        });
      }
    }
  }
  return detail.length ? { ok: false, detail } : { ok: true, value };
}

function validateOne(
  param: Param,
  raw: string | undefined,
): { value: unknown } | { failure: Failure } {
  if (raw === undefined) {
    let absent = absentOf.get(param);
    if (!absent) absentOf.set(param, absent = absentResult(param));
    return absent;
  }
  const converted = convert(param, raw);
  if ("failure" in converted) return converted;
  return parseWith(param.schema, converted.value);
}

function absentResult(param: Param): { value: unknown } | { failure: Failure } {
  if (param.required) return { failure: { type: "missing", msg: "Field required" } };
  return parseWith(param.schema, undefined);
}

function convert(param: Param, raw: string): { value: unknown } | { failure: Failure } {
  switch (param.kind) {
    case "int":
      return INT.test(raw.trim()) ? { value: Number(raw.trim()) } : {
        failure: {
          type: "int_parsing",
          msg: "Input should be a valid integer, unable to parse string as an integer",
        },
      };
    case "number":
      return NUMBER.test(raw.trim()) && Number.isFinite(Number(raw))
        ? { value: Number(raw.trim()) }
        : {
          failure: {
            type: "float_parsing",
            msg: "Input should be a valid number, unable to parse string as a number",
          },
        };
    case "bool": {
      // The words pydantic takes for a boolean, whose 422 vocabulary this answers in.
      const t = raw.trim().toLowerCase();
      if (TRUE_WORDS.has(t)) return { value: true };
      if (FALSE_WORDS.has(t)) return { value: false };
      return {
        failure: {
          type: "bool_parsing",
          msg: "Input should be a valid boolean, unable to interpret input",
        },
      };
    }
    case "string":
      return { value: param.upper ? asciiUpper(raw.trim()) : raw.trim() };
  }
}

/**
 * a–z in upper case, and nothing else: String#toUpperCase maps all of Unicode, so a ligature "ﬀ"
 * became "FF" and a long "ſ" an "S", making a 9-character value a valid, charged ASIN (probe EA).
 */
function asciiUpper(s: string): string {
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}

const TRUE_WORDS = new Set(["true", "1", "yes", "y", "on", "t"]);
const FALSE_WORDS = new Set(["false", "0", "no", "n", "off", "f"]);

function parseWith(schema: z.ZodType, input: unknown): { value: unknown } | { failure: Failure } {
  const r = schema.safeParse(input);
  if (r.success) return { value: r.data };
  const first = reportedIssues(r.error.issues)[0];
  return { failure: describeIssue(first as unknown as Record<string, unknown>) };
}
