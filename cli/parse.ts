/**
 * `deno task parse [--type T] [--marketplace M] FILE`: parses one saved page and prints the JSON
 * the matching endpoint returns for it: the parser's reading inside the endpoint's envelope,
 * built by the same code as the HTTP answer (upstream/envelopes.ts), and checked against the
 * endpoint's response schema. Request fields the page does not state (a search's `query`, a
 * storefront's `seller_id`) come from its canonical URL where it has one. Exit 1 with a one-line
 * reason for a blocked, missing or unrecognised page, or another marketplace's; exit 2 for a
 * usage error.
 */
import { pageMarketplace } from "../parsers/page_common.ts";
import { decodeHtml } from "../parsers/decode.ts";
import { detectPage } from "../parsers/detect.ts";
import { PARSERS } from "../parsers/mod.ts";
import { withoutControlChars } from "../parsers/control_chars.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { PAGE_TYPES, type PageType } from "../schemas/pages.ts";
import {
  marketplace as marketplaceOfCode,
  marketplaceForHost,
  MARKETPLACES,
} from "../schemas/marketplaces.ts";
import {
  type Answered,
  envelope,
  type Listing,
  PAGE_ENDPOINT,
  type Params,
} from "../upstream/envelopes.ts";
import { ALL_ENDPOINTS } from "../schemas/endpoints.ts";
import { reviewUrl } from "../upstream/urls.ts";
import { MAX_UPSTREAM_BYTES } from "../upstream/read_capped.ts";
import { readAtMostSync } from "../core/read_at_most.ts";
import { decodeBody } from "../upstream/record_body.ts";
import { otherSite } from "../upstream/page_read.ts";

interface Args {
  type?: PageType;
  marketplace?: string;
  file: string;
}

const USAGE = "usage: deno task parse [--type T] [--marketplace M] FILE";

function fail(code: number, line: string): never {
  console.error(line.replace(/\s+/g, " ").trim());
  Deno.exit(code);
}

function parseArgs(argv: string[]): Args {
  const args: Partial<Args> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.startsWith("--") ? a.split(/=(.*)/s, 2) : [a, undefined];
    const value = () => inline ?? argv[++i] ?? fail(2, `${flag} needs a value; ${USAGE}`);
    if (flag === "--type") {
      const t = value();
      if (!(PAGE_TYPES as readonly string[]).includes(t)) {
        fail(2, `unknown --type ${t}; one of ${PAGE_TYPES.join(", ")}`);
      }
      args.type = t as PageType;
    } else if (flag === "--marketplace") {
      const m = value().toUpperCase();
      if (!MARKETPLACES.has(m)) {
        fail(2, `unknown --marketplace ${m}; one of ${[...MARKETPLACES.keys()].join(", ")}`);
      }
      args.marketplace = m;
    } else if (flag === "--help" || flag === "-h") {
      console.log(USAGE); // asked for: the answer, on stdout as the admin CLI's help is
      Deno.exit(0);
    } else if (a.startsWith("--") || args.file) {
      fail(2, `unexpected argument ${a}; ${USAGE}`);
    } else {
      args.file = a;
    }
  }
  if (!args.file) fail(2, USAGE);
  return args as Args;
}

/** The page's canonical URL, when it declares one. */
function canonicalOf(html: string): string | undefined {
  const tag = /<link[^>]+rel=["']?canonical["']?[^>]*>/i.exec(html)?.[0];
  return tag ? /href=["']([^"']+)["']/i.exec(tag)?.[1] : undefined;
}

/**
 * The marketplace the page names in its head (its marketplace id, which the reader checks), else
 * that of the canonical link, else of the first Amazon storefront URL, else US.
 */
function marketplaceOf(html: string, canonical?: string): string {
  const own = pageMarketplace(html);
  if (own) return own.code;
  const hosts = [canonical, /https?:\/\/(www\.amazon\.[a-z.]+)\//i.exec(html)?.[1]];
  for (const h of hosts) {
    if (!h) continue;
    const host = /^https?:\/\//.test(h) ? URL.parse(h)?.hostname : h;
    const m = host ? marketplaceForHost(host) : undefined;
    if (m) return m.code;
  }
  return "US";
}

/** The value attribute of the first input matching `attrs`, entities left as the page has them. */
function inputValue(html: string, attrs: RegExp): string | undefined {
  const tag = new RegExp(`<input[^>]*${attrs.source}[^>]*>`, "i").exec(html)?.[0];
  return tag ? /\bvalue=["']([^"']*)["']/i.exec(tag)?.[1] : undefined;
}

/**
 * The endpoint's answer around a parser's reading, with the request fields the page states: its
 * canonical URL, else its search box (the keywords) and its storefront form (the seller).
 */
function enveloped(
  type: PageType,
  mp: string,
  canonical: string | undefined,
  result: unknown,
  html: string,
) {
  // A single review without a canonical link is named by its id, as the endpoint asks for it
  // (probe CU: the marketplace's root was printed).
  const reviewId = type === "review" ? (result as { review?: { id?: unknown } }).review?.id : null;
  const url = canonical ??
    (typeof reviewId === "string" && reviewId
      ? reviewUrl(mp, reviewId)
      : `https://${marketplaceOfCode(mp).host}/`);
  const q = URL.parse(url)?.searchParams;
  const params: Params = {};
  const query = q?.get("k") ?? inputValue(html, /id=["']twotabsearchtextbox["']/);
  if (query) params.query = query;
  const seller = q?.get("me") ?? inputValue(html, /name=["']me["']/);
  if (seller) params.seller_id = seller;
  // The page the parser read off the page itself, else the canonical link's (reviews name it
  // `pageNumber`): a saved page 3 may declare page 1's canonical URL.
  const read = (result as { page?: unknown } | null)?.page;
  const page = typeof read === "number"
    ? read
    : Number(q?.get("page") ?? q?.get("pageNumber") ?? 1);
  if (Number.isInteger(page) && page > 0) params.page = page;
  const answered: Answered = { url, authenticated: false };
  switch (type) {
    case "search":
      return envelope.listing(params, mp, result as Listing, {
        query: params.query ?? "",
        sort: null,
      });
    case "seller_products":
      return envelope.listing(params, mp, result as Listing, {
        seller_id: params.seller_id ?? "",
      });
    default: {
      const build = envelope[PAGE_ENDPOINT[type] as keyof typeof envelope] as (
        p: Params,
        mp: string,
        a: Answered,
        v: unknown,
      ) => unknown;
      return build(params, mp, answered, result);
    }
  }
}

/**
 * The file's bytes, refused past `max`, the most the server reads of a page: read whole,
 * `/dev/zero` took 3 GB in 6 s (probe DZ).
 */
function readAtMost(path: string, max: number): Uint8Array {
  using f = Deno.openSync(path);
  const bytes = readAtMostSync(f, max);
  if (!bytes) throw new Error(`larger than the ${max >> 20} MiB a page may be`);
  return bytes;
}

async function main() {
  const args = parseArgs(Deno.args);
  let bytes: Uint8Array;
  try {
    bytes = readAtMost(args.file, MAX_UPSTREAM_BYTES);
  } catch (e) {
    fail(1, `cannot read ${args.file}: ${e instanceof Error ? e.message : e}`);
  }
  // A gzipped page, as the test fixtures are kept, read as a page is over HTTP (probe EZ: it was
  // "unrecognised").
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    const unzipped = await decodeBody(bytes, undefined, "gzip", MAX_UPSTREAM_BYTES);
    if ("unusable" in unzipped) fail(1, `cannot read ${args.file}: it ${unzipped.unusable}`);
    bytes = unzipped.body;
  }
  const html = decodeHtml(bytes);
  const detected = detectPage(html);
  if (detected.kind === "blocked") fail(1, `blocked page (${detected.reason}): ${args.file}`);
  if (detected.kind === "not_found") fail(1, `Amazon's "page not found" page: ${args.file}`);
  const type = args.type ?? (detected.kind === "page" ? detected.type : undefined);
  if (!type) fail(1, `unrecognised page, no --type given: ${args.file}`);
  const canonical = canonicalOf(html);
  const marketplace = args.marketplace ?? marketplaceOf(html, canonical);
  // Refused as the endpoint refuses it: another site's page, labelled with the asked one and its
  // prices read without their currency, was printed as an answer (probe HP).
  const elsewhere = otherSite(html, marketplace);
  if (elsewhere) fail(1, `${elsewhere}: ${args.file}`);
  try {
    const result = withoutControlChars(PARSERS[type](html, { marketplace, url: canonical }));
    const answer = enveloped(type, marketplace, canonical, result, html);
    const ep = ALL_ENDPOINTS.find((e) => e.name === PAGE_ENDPOINT[type])!;
    const checked = ep.response.safeParse(answer);
    if (!checked.success) {
      fail(
        1,
        `incomplete: the ${ep.path} answer fails its schema: ${checked.error.issues[0]?.message}`,
      );
    }
    console.log(JSON.stringify(checked.data, null, 2));
  } catch (e) {
    if (e instanceof ParseError) fail(1, `${e.reason}: ${e.message}`);
    fail(1, `parser failed: ${e instanceof Error ? e.message : e}`);
  }
}

if (import.meta.main) await main();
