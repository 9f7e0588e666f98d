/**
 * Parser benchmark: for each page type, the median time to parse and extract each corpus page,
 * against a bare htmlparser2 tokenizer pass over the same text in the same run. Target ≤ 1.5×.
 *
 * Fairness: every page is warmed up first (both sides, so the JIT has compiled both), then parse
 * and tokenizer runs alternate, so that a burst of load from elsewhere on the machine lands on
 * both sides alike; each side's figure is the median of its runs.
 */
import { Parser } from "htmlparser2";
import { median } from "./median.ts";
import { fixture, fixtureMarketplace, fixtureNames } from "../tests/fixture.ts";
import { PARSERS } from "../parsers/mod.ts";
import type { PageType } from "../schemas/pages.ts";

const FOLDERS: [string, PageType][] = [
  ["search", "search"],
  ["seller_products", "seller_products"],
  ["product", "product"],
  ["offers", "offers"],
  ["reviews", "reviews"],
  ["bestsellers", "bestsellers"],
];

const WARMUP = 3;

function elapsed(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

/** The baseline: htmlparser2's tokenizer and parser with no handlers, over the same text. */
function tokenize(html: string): void {
  const p = new Parser({}, { decodeEntities: true });
  p.write(html);
  p.end();
}

/** Median parse and tokenizer times of one page, from alternating runs after a warm-up. */
function measure(
  parse: () => void,
  base: () => void,
  runs: number,
): { parse: number; base: number } {
  for (let i = 0; i < WARMUP; i++) {
    parse();
    base();
  }
  const p: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    p.push(elapsed(parse));
    b.push(elapsed(base));
  }
  return { parse: median(p), base: median(b) };
}

export async function benchParsers(runs = 11): Promise<void> {
  console.log(
    `parsers (per page: median of ${runs} runs after ${WARMUP} warm-up runs; ` +
      "baseline: bare htmlparser2 tokenizer pass over the same text, alternating with the parse):",
  );
  for (const [folder, type] of FOLDERS) {
    const ratios: number[] = [];
    let worst = "";
    let parseMs = 0, baseMs = 0;
    for (const name of fixtureNames(folder)) {
      const html = await fixture(name);
      const opts = { marketplace: fixtureMarketplace(name) };
      const parse = () => {
        try {
          PARSERS[type](html, opts);
        } catch { /* a page the parser refuses still costs its time */ }
      };
      const m = measure(parse, () => tokenize(html), runs);
      parseMs += m.parse;
      baseMs += m.base;
      if (m.parse / m.base > Math.max(0, ...ratios)) worst = name.split("/").pop()!;
      ratios.push(m.parse / m.base);
    }
    console.log(
      `  ${folder.padEnd(16)} pages ${String(ratios.length).padStart(2)}  parse ${
        parseMs.toFixed(1).padStart(7)
      } ms  ` +
        `tokenizer ${baseMs.toFixed(1).padStart(7)} ms  ratio ${(parseMs / baseMs).toFixed(2)}  ` +
        `median page ${median(ratios).toFixed(2)}  (target ≤ 1.50)  worst page ${
          Math.max(...ratios).toFixed(2)
        } ${worst}`,
    );
  }
}
