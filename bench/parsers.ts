/**
 * Parser benchmark: for each page type, the median time to parse and extract a corpus page,
 * against a bare htmlparser2 tokenizer pass over the same text in the same run. Target ≤ 1.5×.
 */
import { Parser } from "htmlparser2";
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

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(fn: () => void, runs: number): number {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

function tokenize(html: string): void {
  const p = new Parser({}, { decodeEntities: true });
  p.write(html);
  p.end();
}

export async function benchParsers(runs = 7): Promise<void> {
  console.log("parsers (median ms per page; baseline: bare htmlparser2 tokenizer pass over the same text):");
  for (const [folder, type] of FOLDERS) {
    const ratios: number[] = [];
    let parseMs = 0, baseMs = 0;
    for (const name of fixtureNames(folder)) {
      const html = await fixture(name);
      const opts = { marketplace: fixtureMarketplace(name) };
      const parse = () => {
        try {
          PARSERS[type](html, opts);
        } catch { /* a page the parser refuses still costs its time */ }
      };
      parse();
      tokenize(html);
      const p = time(parse, runs);
      const b = time(() => tokenize(html), runs);
      parseMs += p;
      baseMs += b;
      ratios.push(p / b);
    }
    const worst = Math.max(...ratios);
    console.log(
      `  ${folder.padEnd(16)} pages ${String(ratios.length).padStart(2)}  parse ${parseMs.toFixed(1).padStart(7)} ms  ` +
        `tokenizer ${baseMs.toFixed(1).padStart(7)} ms  ratio ${(parseMs / baseMs).toFixed(2)}  worst page ${worst.toFixed(2)} (target ≤ 1.50)`,
    );
  }
}
