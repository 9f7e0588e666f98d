/**
 * Hostile query strings for an endpoint: its own parameters (and strangers) with wrong types,
 * huge and negative numbers, unicode, repeats, over-long values, injection strings and broken
 * percent-encoding, mixed with valid values so that some calls get through validation. Built as
 * raw text, not through URLSearchParams, so that the garbage reaches the server as written.
 */
import type { Endpoint } from "../../schemas/endpoints.ts";

/** A value that passes validation, per parameter name. */
const VALID: Record<string, string[]> = {
  asin: ["B07H57DNVV", "b07h57dnvv"],
  marketplace: ["US", "de", "JP"],
  zip: ["10001"],
  page: ["1", "2"],
  limit: ["0", "20"],
  query: ["laptop", "usb c cable"],
  sort: ["relevance", "helpful", "price-asc-rank"],
  star: ["five"],
  department: ["electronics"],
  min_price: ["1.5"],
  max_price: ["100"],
  prime_only: ["true", "FALSE"],
  include_sponsored: ["false"],
  verified_only: ["true"],
  category: ["electronics"],
  category_id: ["172282"],
  seller_id: ["A1B2C3D4E5F6G7"],
  deal_id: ["abc123"],
  review_id: ["R1ABCDEF12"],
  promo_id: ["A1B2C3D4E5F6"],
  gtin: ["012345678905"],
  url: ["https://www.amazon.com/dp/B07H57DNVV", "https://www.amazon.de/s?k=lampe"],
};

const WRONG_TYPES = [
  "abc",
  "1.5",
  "true",
  "[]",
  "{}",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "1e3",
  "1e309",
  "-0",
  "+1",
  " 1 ",
  "1,000",
  "١٢",
  "",
  " ",
  "\t",
];
const NUMBERS = [
  "-1",
  "0",
  "-999999999999999999999",
  "99999999999999999999999",
  "9007199254740993",
  "-0.0001",
  "1e-400",
  "201",
  "401",
  "4294967296",
  "-2147483649",
  "1.7976931348623157e309",
  "0.1e1",
  ".5",
  "5.",
];
const UNICODE = [
  "日本語",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "\u0000",
  "\u202eevil",
  "ß",
  "İ",
  "😀😀",
  "e\u0301",
  "\uFEFF",
  "\u2028",
  "Ａ１",
  "ＵＳ",
  "ｂ０７ｈ５７ｄｎｖｖ",
];
const INJECTION = [
  "' OR 1=1 --",
  '"; DROP TABLE accounts; --',
  "<script>alert(1)</script>",
  "${7*7}",
  "{{7*7}}",
  "../../etc/passwd",
  "..%2f..%2fetc%2fpasswd",
  "\r\nSet-Cookie: x=1",
  "%0d%0aX-Injected: 1",
  "$(id)",
  "`id`",
  "__proto__",
  "constructor",
  '{"$gt":""}',
  "http://127.0.0.1:1/",
  "file:///etc/passwd",
  "javascript:alert(1)",
  "https://www.amazon.com@127.0.0.1/",
  "https://evil.example/dp/B07H57DNVV",
  "//evil.example",
  "\\\\evil\\share",
];
/** Already-encoded text sent as is: broken escapes, overlong UTF-8, lone surrogates, NUL. */
const RAW_ENCODED = [
  "%",
  "%z",
  "%zz",
  "%E0%A4%A",
  "%%%",
  "%C0%AF",
  "%FF%FE",
  "%ED%A0%80",
  "%00",
  "%2500",
  "+%2B+",
  "%u0041",
  "%F0%9F%98",
  "a%26b%3Dc",
  "%5B%5D",
];
const STRANGE_NAMES = [
  "ASIN",
  "asin[]",
  "asin[0]",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "",
  " asin",
  "api_key",
  "x".repeat(300),
  "日本",
  "page%00",
  "a%zz",
];

export interface Generated {
  endpoint: Endpoint;
  path: string;
}

export function hostileQuery(endpoints: readonly Endpoint[], next: () => number): Generated {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const endpoint = pick(endpoints);
  const names = Object.keys(endpoint.params);
  const parts: string[] = [];
  // An HTTP client refuses a URL past 64 KiB ("Invalid URL") before anything is sent, so the
  // over-long values of one query share a budget that keeps the whole URL well under that.
  let longBudget = 24_000;
  for (const name of names) {
    const r = next();
    if (r < 0.15) continue; // leave it out (required ones then give "missing")
    parts.push(`${encodeURIComponent(name)}=${value(name, r < 0.45)}`);
    if (next() < 0.1) parts.push(`${encodeURIComponent(name)}=${value(name, next() < 0.5)}`); // repeated
  }
  if (next() < 0.3) parts.push(`${encodeName(pick(STRANGE_NAMES))}=${value("", false)}`);
  if (next() < 0.05) parts.push(pick(["&", "&&", "=", "==", "a", "=x", "&=&"]));
  // Shuffle, so that order never decides validity.
  for (let i = parts.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [parts[i], parts[j]] = [parts[j], parts[i]];
  }
  const q = parts.join("&");
  return { endpoint, path: q ? `${endpoint.path}?${q}` : endpoint.path };

  function value(name: string, valid: boolean): string {
    if (valid && VALID[name]) return encodeURIComponent(pick(VALID[name]));
    switch (Math.floor(next() * 7)) {
      case 0:
        return encodeURIComponent(pick(WRONG_TYPES));
      case 1:
        return encodeURIComponent(pick(NUMBERS));
      case 2:
        return encodeURIComponent(pick(UNICODE));
      case 3:
        return encodeURIComponent(pick(INJECTION));
      case 4:
        return pick(RAW_ENCODED);
      case 5: { // over-long: past every max, up to 8 KB as sent
        const unit = pick(["A", "9", "%41", "é"]);
        const sentBytes = unit === "é" ? 6 : unit.length; // é goes out as %C3%A9
        const reps = Math.min(
          pick([201, 301, 2_001, 4_000]),
          Math.floor(8_192 / sentBytes),
          Math.floor(longBudget / sentBytes),
        );
        longBudget -= reps * sentBytes;
        return reps > 200 ? unit.repeat(reps) : encodeURIComponent(pick(WRONG_TYPES));
      }
      default: // a valid value with garbage around it
        return encodeURIComponent(
          pick(VALID[name] ?? ["x"]) + pick(["", " ", "\u0000", "'", "%", "日"]),
        ) +
          pick(["", "%", "%2", "+"]);
    }
  }
}

function encodeName(name: string): string {
  return /%/.test(name) ? name : encodeURIComponent(name);
}
