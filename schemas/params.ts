/**
 * Query-parameter declarations. Each parameter is a typed zod schema (what the OpenAPI document
 * shows) plus the `kind` that says how its query-string text is converted before validation.
 */
import { z } from "zod";
import { MARKETPLACE_CODES } from "./marketplaces.ts";

export type ParamKind = "string" | "int" | "number" | "bool";

export interface Param {
  kind: ParamKind;
  schema: z.ZodType;
  required: boolean;
  /** Upper-case the text before validation (codes and ids Amazon spells in capitals). */
  upper?: boolean;
  /** The name of a parameter this one may not exceed when both are given (min_price ≤ max_price). */
  atMost?: string;
}

export function str(
  description: string,
  opts: { pattern?: RegExp; min?: number; max?: number; required?: boolean; upper?: boolean } = {},
): Param {
  let s = z.string().min(opts.min ?? 1).max(opts.max ?? 200);
  if (opts.pattern) s = s.regex(opts.pattern);
  return {
    kind: "string",
    schema: (opts.required ? s : s.optional()).describe(description),
    required: !!opts.required,
    upper: opts.upper,
  };
}

export function int(description: string, min: number, max: number, dflt: number): Param {
  return {
    kind: "int",
    schema: z.int().min(min).max(max).default(dflt).describe(description),
    required: false,
  };
}

export function num(description: string, min: number, max: number): Param {
  return {
    kind: "number",
    schema: z.number().min(min).max(max).optional().describe(description),
    required: false,
  };
}

export function bool(description: string, dflt: boolean): Param {
  return { kind: "bool", schema: z.boolean().default(dflt).describe(description), required: false };
}

export function oneOf(description: string, values: readonly [string, ...string[]]): Param {
  return {
    kind: "string",
    schema: z.enum(values).optional().describe(description),
    required: false,
  };
}

export const ASIN = /^[A-Z0-9]{10}$/;
/** A postcode as the details call takes it; the watch body shares it. */
export const ZIP = /^[A-Za-z0-9][A-Za-z0-9 -]{1,11}$/;

export const shared = {
  marketplace: {
    kind: "string",
    schema: z.enum(MARKETPLACE_CODES as [string, ...string[]]).default("US")
      .describe("Two-letter marketplace code"),
    required: false,
    upper: true,
  } satisfies Param,
  zip: str("Delivery postcode; send it for price-accurate data", {
    pattern: ZIP,
    max: 12,
  }),
};

export const page = int("1-based page number", 1, 400, 1);
export const asin = str("Marketplace product identifier (ASIN)", {
  pattern: ASIN,
  required: true,
  upper: true,
});
