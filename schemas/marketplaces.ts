/**
 * The marketplaces Shelf knows: the one table that maps a two-letter code to its site, currency
 * and language. The spec lists ten; the rest are the other Amazon sites the corpus holds pages of.
 */
export interface Marketplace {
  code: string;
  host: string;
  currency: string;
  /** Accept-Language the site answers in by default. */
  language: string;
}

const table: Marketplace[] = [
  { code: "US", host: "www.amazon.com", currency: "USD", language: "en-US" },
  { code: "UK", host: "www.amazon.co.uk", currency: "GBP", language: "en-GB" },
  { code: "DE", host: "www.amazon.de", currency: "EUR", language: "de-DE" },
  { code: "FR", host: "www.amazon.fr", currency: "EUR", language: "fr-FR" },
  { code: "IT", host: "www.amazon.it", currency: "EUR", language: "it-IT" },
  { code: "ES", host: "www.amazon.es", currency: "EUR", language: "es-ES" },
  { code: "CA", host: "www.amazon.ca", currency: "CAD", language: "en-CA" },
  { code: "JP", host: "www.amazon.co.jp", currency: "JPY", language: "ja-JP" },
  { code: "IN", host: "www.amazon.in", currency: "INR", language: "en-IN" },
  { code: "AU", host: "www.amazon.com.au", currency: "AUD", language: "en-AU" },
  { code: "AE", host: "www.amazon.ae", currency: "AED", language: "en-AE" },
  { code: "SA", host: "www.amazon.sa", currency: "SAR", language: "ar-SA" },
  { code: "BR", host: "www.amazon.com.br", currency: "BRL", language: "pt-BR" },
  { code: "NL", host: "www.amazon.nl", currency: "EUR", language: "nl-NL" },
  { code: "MX", host: "www.amazon.com.mx", currency: "MXN", language: "es-MX" },
  { code: "SE", host: "www.amazon.se", currency: "SEK", language: "sv-SE" },
  { code: "PL", host: "www.amazon.pl", currency: "PLN", language: "pl-PL" },
  { code: "SG", host: "www.amazon.sg", currency: "SGD", language: "en-SG" },
];

export const MARKETPLACES: ReadonlyMap<string, Marketplace> = new Map(
  table.map((m) => [m.code, m]),
);
export const MARKETPLACE_CODES: readonly string[] = table.map((m) => m.code);

/** The marketplace for a code; throws RangeError for a code not in the table. */
export function marketplace(code: string): Marketplace {
  const m = MARKETPLACES.get(code.toUpperCase());
  if (!m) {
    throw new RangeError(`Cannot find marketplace as 'code' is unknown: current value is ${code}`);
  }
  return m;
}

/** The marketplace serving a host name (`amazon.de`, `www.amazon.de`, `smile.amazon.de`), or undefined. */
export function marketplaceForHost(host: string): Marketplace | undefined {
  const h = host.toLowerCase().replace(/\.$/, "");
  return table.find((m) => {
    const bare = m.host.slice(4); // without "www."
    return h === bare || h.endsWith("." + bare);
  });
}
