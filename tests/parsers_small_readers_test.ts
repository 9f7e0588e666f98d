/**
 * Small readers on hand-made input shaped as the pages write it, for shapes no corpus page holds:
 * control characters out of answers (parsers/control_chars.ts), best-seller rank rows
 * (parsers/rank.ts), detail-table rows (parsers/detail_tables.ts) and the best sellers page's
 * markers (parsers/bestsellers.ts).
 */
import assert from "node:assert/strict";
import { AnswerTooLarge, withoutControlChars } from "../parsers/control_chars.ts";
import { ranksOf } from "../parsers/rank.ts";
import { DETAIL_SECTION_IDS, readDetailFacts } from "../parsers/detail_tables.ts";
import { byIds, captureSections } from "../parsers/sections.ts";
import { parseBestsellers } from "../parsers/bestsellers.ts";

Deno.test("control characters: vertical tab and form feed leave an answer's strings like other controls", () => {
  const answer = withoutControlChars({
    title: "USB-C\x0b Cable\x0c 2 m",
    bullets: ["Braided\x0c nylon", "Line\nbreak\tand tab stay"],
  });
  assert.deepEqual(answer, {
    title: "USB-C Cable 2 m",
    bullets: ["Braided nylon", "Line\nbreak\tand tab stay"],
  });
});

Deno.test("control characters: strings inside arrays count toward an answer's size bound", () => {
  // Keys hold 7 characters; the two bullets 1,200: over a bound of 1,000 only by the array's strings.
  const answer = () => ({ bullets: ["a".repeat(600), "b".repeat(600)] });
  assert.throws(() => withoutControlChars(answer(), 1_000), AnswerTooLarge);
  assert.throws(() => withoutControlChars([answer()], 1_000), AnswerTooLarge);
  assert.deepEqual(withoutControlChars(answer(), 1_207), answer());
});

Deno.test("bestsellers_rank: the Swedish rank label, and ranks grouped with a space or a no-break space", () => {
  assert.deepEqual(
    ranksOf({ "Rangordning för bästsäljare": "1 425 i Böcker 12 i Deckare" }),
    [{ rank: 1425, category: "Böcker" }, { rank: 12, category: "Deckare" }],
  );
  // French groups thousands with a no-break space (U+00A0) or a narrow one (U+202F).
  for (const space of [" ", "\u00a0", "\u202f"]) {
    assert.deepEqual(
      ranksOf({
        "Classement des meilleures ventes d'Amazon":
          `n°1${space}234 dans Livres (Voir les 100 premiers en Livres) n°12 dans Romans`,
      }),
      [{ rank: 1234, category: "Livres" }, { rank: 12, category: "Romans" }],
      JSON.stringify(space),
    );
  }
});

/** product_facts of hand-made detail sections, read the way the product parser reads them. */
function facts(html: string): Record<string, string> {
  const page = captureSections(html, { ids: new Set(DETAIL_SECTION_IDS) });
  return readDetailFacts(byIds(page, DETAIL_SECTION_IDS));
}

Deno.test("product_facts: a table row's first cell is the label and its last the value; a one-cell row is no fact", () => {
  assert.deepEqual(
    facts(
      `<div id="prodDetails"><table id="productDetails_techSpec_section_1"><tbody>` +
        `<tr><td colspan="2">Additional Information</td></tr>` +
        `<tr><th class="a-color-secondary">Item Weight</th><td></td><td>1.2 kg</td></tr>` +
        `</tbody></table></div>`,
    ),
    { "Item Weight": "1.2 kg" },
  );
});

Deno.test("product_facts: a bullet's bold label must open it, and the ':' after it is no part of the value", () => {
  assert.deepEqual(
    facts(
      `<div id="detailBullets_feature_div"><ul>` +
        `<li><b>Publisher</b>: Ryland Peters &amp; Small (2015)</li>` +
        `<li><span class="a-list-item"><span class="a-text-bold">Language ‏ : ‎</span>` +
        ` <span>English</span></span></li>` +
        `<li>Ships from <b>Amazon</b> in two days</li>` +
        `</ul></div>`,
    ),
    { Publisher: "Ryland Peters & Small (2015)", Language: "English" },
  );
});

Deno.test("product_facts: #prodDetails wins a label it shares with #tech, whichever comes first on the page", () => {
  const tech = `<div id="tech"><table><tr><th>Item Weight</th><td>1.2 kg</td></tr>` +
    `<tr><th>Colour</th><td>Black</td></tr></table></div>`;
  const prod = `<div id="prodDetails"><table><tr><th>Item Weight</th><td>1.18 Kilograms</td></tr>` +
    `</table></div>`;
  const expected = { "Item Weight": "1.18 Kilograms", Colour: "Black" };
  assert.deepEqual(facts(tech + prod), expected);
  assert.deepEqual(facts(prod + tech), expected);
});

Deno.test("product_facts: a label named like a member of every object is read as any other (probe IC)", () => {
  assert.deepEqual(
    facts(
      `<div id="prodDetails"><table><tr><th>constructor</th><td>ACME</td></tr>` +
        `<tr><th>toString</th><td>yes</td></tr><tr><th>Colour</th><td>Black</td></tr>` +
        `<tr><th>constructor</th><td>second</td></tr></table></div>`,
    ),
    { constructor: "ACME", toString: "yes", Colour: "Black" },
  );
});

Deno.test("parseBestsellers(): a page is known as best sellers by its gridItemRoot cards alone", () => {
  // One card as the amazon.com zgbs grid writes it, its badge with one class more and without the
  // page's banner and list markup.
  const html = `<html><body><h1>Best Sellers in Home Improvement</h1>` +
    `<div id="gridItemRoot" class="a-column a-span12 a-text-center">` +
    `<div class="a-section zg-bdg-ctr"><span class="zg-bdg-text aok-float-left">#1</span></div>` +
    `<div id="B08N5NQ869" class="p13n-sc-uncoverable-faceout">` +
    `<a class="a-link-normal" href="/Ring-Video-Doorbell/dp/B08N5NQ869/ref=zg_bs_hi_sccl_1">` +
    `<div class="_cDEzb_p13n-sc-css-line-clamp-3_g3dy1">Ring Video Doorbell</div></a>` +
    `<span class="p13n-sc-price">$59.99</span></div></div>` +
    `<!-- EndZeitgeist --></body></html>`;
  const page = parseBestsellers(html, { marketplace: "us" });
  assert.equal(page.category, "Best Sellers in Home Improvement");
  assert.deepEqual(
    page.results.map((r) => [r.rank, r.asin, r.title, r.price?.amount]),
    [[1, "B08N5NQ869", "Ring Video Doorbell", 59.99]],
  );
});
