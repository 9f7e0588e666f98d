/**
 * The marketplace table (schemas/marketplaces.ts): each code's site, currency and language, and the
 * marketplace id its real pages carry. The ten codes SPEC.md lists (US, UK, DE, FR, IT, ES, CA,
 * JP, IN, AU) and the other sites of the corpus; the ids are checked against every corpus page
 * (tests/fixtures, the gzipped copy of ../shared/corpus, MANIFEST.tsv naming each page's host)
 * whose head names a `ue_mid`.
 */
import assert from "node:assert/strict";
import { fixture } from "./fixture.ts";
import {
  marketplace,
  MARKETPLACE_CODES,
  marketplaceForHost,
  marketplaceForId,
} from "../schemas/marketplaces.ts";
import { navigationHeaders } from "../upstream/browser_headers.ts";
import { pageMarketplaceId } from "../parsers/page_common.ts";

/** code: host, the country's ISO 4217 currency, the site's default language. */
const EXPECTED: Record<string, [string, string, string]> = {
  US: ["www.amazon.com", "USD", "en-US"],
  UK: ["www.amazon.co.uk", "GBP", "en-GB"],
  DE: ["www.amazon.de", "EUR", "de-DE"],
  FR: ["www.amazon.fr", "EUR", "fr-FR"],
  IT: ["www.amazon.it", "EUR", "it-IT"],
  ES: ["www.amazon.es", "EUR", "es-ES"],
  CA: ["www.amazon.ca", "CAD", "en-CA"],
  JP: ["www.amazon.co.jp", "JPY", "ja-JP"],
  IN: ["www.amazon.in", "INR", "en-IN"],
  AU: ["www.amazon.com.au", "AUD", "en-AU"],
  AE: ["www.amazon.ae", "AED", "en-AE"],
  SA: ["www.amazon.sa", "SAR", "ar-SA"],
  BR: ["www.amazon.com.br", "BRL", "pt-BR"],
  NL: ["www.amazon.nl", "EUR", "nl-NL"],
  MX: ["www.amazon.com.mx", "MXN", "es-MX"],
  SE: ["www.amazon.se", "SEK", "sv-SE"],
  PL: ["www.amazon.pl", "PLN", "pl-PL"],
  SG: ["www.amazon.sg", "SGD", "en-SG"],
};

Deno.test("marketplaces: SPEC.md's ten codes and the corpus's other sites, each with its host, currency and language", () => {
  for (const code of ["US", "UK", "DE", "FR", "IT", "ES", "CA", "JP", "IN", "AU"]) {
    assert.ok(MARKETPLACE_CODES.includes(code), `${code} is listed by SPEC.md`);
  }
  assert.deepEqual([...MARKETPLACE_CODES].sort(), Object.keys(EXPECTED).sort());
  for (const [code, [host, currency, language]] of Object.entries(EXPECTED)) {
    const m = marketplace(code);
    assert.deepEqual(
      { code: m.code, host: m.host, currency: m.currency, language: m.language },
      { code, host, currency, language },
      code,
    );
    assert.equal(marketplaceForHost(host.slice(4))?.code, code, host);
  }
});

Deno.test("marketplaces: the pages of a site are asked for in its language (Accept-Language)", () => {
  assert.equal(navigationHeaders("DE")["accept-language"], "de-DE,de;q=0.9,en;q=0.8");
  assert.equal(navigationHeaders("JP")["accept-language"], "ja-JP,ja;q=0.9,en;q=0.8");
  assert.equal(navigationHeaders("US")["accept-language"], "en-US,en;q=0.9");
  assert.equal(navigationHeaders("UK")["accept-language"], "en-GB,en;q=0.9");
  assert.equal(navigationHeaders("NL")["accept-language"], "nl-NL,nl;q=0.9,en;q=0.8");
});

Deno.test("marketplaces: each site's id is the ue_mid its real pages name", async () => {
  const manifest = await Deno.readTextFile(new URL("./fixtures/MANIFEST.tsv", import.meta.url));
  const seen = new Set<string>();
  for (const line of manifest.trim().split("\n").slice(1)) {
    const [file, , host] = line.split("\t");
    const m = marketplaceForHost(host);
    if (!m) continue;
    const id = pageMarketplaceId(await fixture(file));
    if (!id) continue;
    assert.equal(m.id, id, `${file} (${host}) names ue_mid ${id}`);
    assert.equal(marketplaceForId(id)?.code, m.code, file);
    seen.add(m.code);
  }
  // Every site the corpus holds a page with a ue_mid of.
  assert.deepEqual(
    [...seen].sort(),
    ["AE", "BR", "CA", "DE", "ES", "FR", "IN", "IT", "JP", "NL", "UK", "US"],
  );
  // The ids are one per site.
  const ids = MARKETPLACE_CODES.map((c) => marketplace(c).id);
  assert.equal(new Set(ids).size, ids.length, "no two sites share an id");
});
