/**
 * Best-seller ranks of a product page (issue 17.2), from the detail tables' rank row in every
 * marketplace's language: "#5,838 in Books (See Top 100 in Books) #2 in Books > … > C",
 * "Nr. 1.234.207 in Küche, Haushalt & Wohnen (Siehe Top 100 in …) Nr. 1345 in Hussen",
 * "nº1,643,215 en Hogar y cocina", "167 en CD & Vinyles … n°9 dans Pop Rock", "Nº 582 em …",
 * "n. 13.222 in Libri (Visualizza i Top 100 nella categoria Libri) n. 3 in Narrativa" (amazon.it),
 * and on amazon.co.jp "- 32,702位ホーム＆キッチン (…の売れ筋ランキングを見る) - 198位 お香".
 * Ranks are whole numbers, so every grouping mark is dropped; entries keep the page's order,
 * which puts the top-level category first where the page shows one.
 */
export interface Rank {
  rank: number;
  category: string;
}

const RANK_LABEL =
  /best ?sellers? ?rank|bestseller-rang|meilleures ventes|más vendidos|mais vendidos|classifica bestseller|売れ筋ランキング|bestsellerlijst|bästsäljar|najlepiej sprzedawan/i;
// "(See Top 100 in Books)" in each language: a link, not a rank. Known by the number 100 standing
// alone in the brackets, since the wording varies by site ("Top 100", "100 premiers", "Top-100",
// "トップ100", and whatever amazon.se or amazon.sa write, which no saved page shows: a list of
// phrases read a Swedish "(Se topp 100 i Böcker)" as ranks of "Böcker (Se topp" and "Böcker)"),
// or by amazon.co.jp's "…の売れ筋ランキングを見る", which names none.
const TOP_100 =
  /\([^()]*(?:(?<!\d[.,\u00a0\u202f ]?)100(?![.,\u00a0\u202f ]?\d)|売れ筋ランキングを見る)[^()]*\)/g;
// Japanese: the rank, 位, then the category up to the "-" that starts the next entry (a category
// may hold a hyphen of its own: "Blu-ray 洋画").
const JA_ENTRY = /(\d[\d,]*)位\s*(.+?)(?=\s*-\s*\d[\d,]*位|$)/g;
// "Nr." (de), "nr." (nl), "n." (it), "nº"/"n°" (es, fr), "Nº" (pt).
const MARK = String.raw`(?:#|[Nn]r\.|[Nn]\.|[Nn][º°])`;
const NUMBER = String.raw`\d{1,3}(?:[.,\u00a0\u202f ]\d{3})+|\d+`;
const WORD = String.raw`(?:in|en|em|dans|nel|w|i)`;
const ENTRY = new RegExp(
  String
    .raw`(?:${MARK}\s*)?(${NUMBER})\s+${WORD}\s+(.+?)(?=\s+(?:${MARK}\s*)?(?:${NUMBER})\s+${WORD}\s|$)`,
  "g",
);

/**
 * The longest rank row read. Real rows are short (the corpus's longest, five ranks with a "See Top
 * 100" link, is 240 characters); ENTRY tries a number at every position of its lazy category
 * text, so a row of one long digit run costs time quadratic in its length (100,000 digits: 4.5 s).
 */
export const MAX_RANK_ROW = 2_000;

/** The ranks of the product_facts row that holds them; [] when the page shows none. */
export function ranksOf(facts: Record<string, string>): Rank[] {
  const row = Object.entries(facts).find(([label]) => RANK_LABEL.test(label))?.[1];
  if (!row || row.length > MAX_RANK_ROW) return [];
  const text = row.replace(TOP_100, " ").replace(/\s+/g, " ").trim();
  const ranks: Rank[] = [];
  for (const m of text.matchAll(text.includes("位") ? JA_ENTRY : ENTRY)) {
    const rank = Number(m[1].replace(/\D/g, ""));
    const category = m[2].trim();
    if (rank > 0 && category) ranks.push({ rank, category });
  }
  return ranks;
}
