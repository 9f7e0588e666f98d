/**
 * The robustness check every parser test runs: a page cut at twenty points, the empty string and
 * plain text each give either a schema-valid result or a ParseError, never any other exception.
 */
import assert from "node:assert/strict";
import type { z } from "zod";
import { ParseError } from "../parsers/parse_error.ts";

type Parser = (html: string, opts: { marketplace: string; url?: string }) => unknown;

export function assertRobust(parse: Parser, schema: z.ZodType, html: string, marketplace: string) {
  const inputs = ["", "not html", "<", "<html><body></body></html>"];
  for (let i = 1; i <= 20; i++) inputs.push(html.slice(0, Math.floor((html.length * i) / 21)));
  for (const input of inputs) {
    try {
      schema.parse(parse(input, { marketplace }));
    } catch (e) {
      assert.ok(e instanceof ParseError, `length ${input.length}: ${e}`);
    }
  }
}
