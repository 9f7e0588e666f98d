/**
 * Brand bylines in the phrasing of every marketplace Shelf serves (issue 16.2). Real pages cover
 * US, UK, DE, FR, ES, IT, CA, IN, AE, BR and JP (tests/parsers_product_test.ts); the phrasings of
 * the marketplaces without a corpus page (NL, SE, PL, TR, SA, MX, SG, AU) are checked here as
 * text, in the words Amazon's own bylines use there.
 */
import assert from "node:assert/strict";
import { brandFromByline } from "../parsers/product.ts";

Deno.test("brandFromByline() names the brand alone in every marketplace's phrasing", () => {
  const cases: [string, string][] = [
    ["Visit the Acme Store", "Acme"],
    ["Brand: Acme", "Acme"],
    ["Besuchen Sie den Acme-Store", "Acme"],
    ["Besuche den Acme-Store", "Acme"],
    ["Marke: Acme", "Acme"],
    ["Visitez la boutique Acme", "Acme"],
    ["Visitez la boutique d'Acme", "Acme"],
    ["Marque : Acme", "Acme"],
    ["Visita la tienda de Acme", "Acme"],
    ["Marca: Acme", "Acme"],
    ["Visita lo Store di Acme", "Acme"],
    ["Bezoek de Acme-winkel", "Acme"],
    ["Merk: Acme", "Acme"],
    ["Visite a loja da Acme", "Acme"],
    ["Besök Acme-butiken", "Acme"],
    ["Varumärke: Acme", "Acme"],
    ["Odwiedź sklep Acme", "Acme"],
    ["Marka: Acme", "Acme"],
    ["Acme Mağazasını ziyaret edin", "Acme"],
    ["قم بزيارة متجر Acme", "Acme"],
    ["Acmeのストアを表示", "Acme"],
    ["Acmeストアにアクセス", "Acme"],
    ["ブランド: Acme", "Acme"],
    ["Visit the Acme Home & Garden Store", "Acme Home & Garden"],
  ];
  for (const [byline, brand] of cases) assert.equal(brandFromByline(byline), brand, byline);
  assert.equal(brandFromByline("Acme"), "", "a bare name is not a phrasing (brandOf keeps it)");
  assert.equal(brandFromByline("Greta Van Fleet (Artist)"), "");
});
