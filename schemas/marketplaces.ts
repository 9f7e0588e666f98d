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
  /**
   * Amazon's marketplace id (the `ue_mid` its pages carry): what tells a page of one site served
   * for another (a proxy, cache or archive handing over the wrong host's page; probe FP).
   */
  id: string;
}

const table: Marketplace[] = [
  { code: "US", host: "www.amazon.com", currency: "USD", language: "en-US", id: "ATVPDKIKX0DER" },
  {
    code: "UK",
    host: "www.amazon.co.uk",
    currency: "GBP",
    language: "en-GB",
    id: "A1F83G8C2ARO7P",
  },
  { code: "DE", host: "www.amazon.de", currency: "EUR", language: "de-DE", id: "A1PA6795UKMFR9" },
  { code: "FR", host: "www.amazon.fr", currency: "EUR", language: "fr-FR", id: "A13V1IB3VIYZZH" },
  { code: "IT", host: "www.amazon.it", currency: "EUR", language: "it-IT", id: "APJ6JRA9NG5V4" },
  { code: "ES", host: "www.amazon.es", currency: "EUR", language: "es-ES", id: "A1RKKUPIHCS9HS" },
  { code: "CA", host: "www.amazon.ca", currency: "CAD", language: "en-CA", id: "A2EUQ1WTGCTBG2" },
  {
    code: "JP",
    host: "www.amazon.co.jp",
    currency: "JPY",
    language: "ja-JP",
    id: "A1VC38T7YXB528",
  },
  { code: "IN", host: "www.amazon.in", currency: "INR", language: "en-IN", id: "A21TJRUUN4KGV" },
  {
    code: "AU",
    host: "www.amazon.com.au",
    currency: "AUD",
    language: "en-AU",
    id: "A39IBJ37TRP1C6",
  },
  { code: "AE", host: "www.amazon.ae", currency: "AED", language: "en-AE", id: "A2VIGQ35RCS4UG" },
  { code: "SA", host: "www.amazon.sa", currency: "SAR", language: "ar-SA", id: "A17E79C6D8DWNP" },
  {
    code: "BR",
    host: "www.amazon.com.br",
    currency: "BRL",
    language: "pt-BR",
    id: "A2Q3Y263D00KWC",
  },
  { code: "NL", host: "www.amazon.nl", currency: "EUR", language: "nl-NL", id: "A1805IZSGTT6HS" },
  {
    code: "MX",
    host: "www.amazon.com.mx",
    currency: "MXN",
    language: "es-MX",
    id: "A1AM78C64UM0Y8",
  },
  { code: "SE", host: "www.amazon.se", currency: "SEK", language: "sv-SE", id: "A2NODRKZP88ZB9" },
  { code: "PL", host: "www.amazon.pl", currency: "PLN", language: "pl-PL", id: "A1C3SOZRARQ6R3" },
  { code: "SG", host: "www.amazon.sg", currency: "SGD", language: "en-SG", id: "A19VAU5U5O7RUS" },
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

/**
 * A host name as hosts are compared: lower-cased, and without a final dot, which names the same
 * host (`WWW.Amazon.de.` is `www.amazon.de`).
 */
export function plainHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, "");
}

/** The marketplace serving a host name (`amazon.de`, `www.amazon.de`, `smile.amazon.de`), or undefined. */
export function marketplaceForHost(host: string): Marketplace | undefined {
  const h = plainHost(host);
  return table.find((m) => {
    const bare = m.host.slice(4); // without "www."
    return h === bare || h.endsWith("." + bare);
  });
}

/** The marketplace whose Amazon marketplace id is `id`, or undefined. */
export function marketplaceForId(id: string): Marketplace | undefined {
  return table.find((m) => m.id === id);
}
