/**
 * Page work: one upstream body decoded once, named once (detect.ts), its delivery location read
 * when a postcode was asked for, and parsed by the parser the endpoint needs. Pure and
 * synchronous, so the same function runs inline and in the page workers (page_pool.ts); what it
 * answers is plain data that a worker can post back.
 */
import { decodePage, garbled } from "../parsers/decode.ts";
import { type Detection, detectPage } from "../parsers/detect.ts";
import { ParseError } from "../parsers/parse_error.ts";
import { PARSERS } from "../parsers/mod.ts";
import { pageMarketplace } from "../parsers/page_common.ts";
import { MARKETPLACES } from "../schemas/marketplaces.ts";
import { type ProductReading, READING_FLAGS } from "../parsers/product.ts";
import { withoutControlChars } from "../parsers/control_chars.ts";
import { PageTooCostly, withinBudget } from "../parsers/page_budget.ts";
import { parseIdentifiers } from "../parsers/identifiers.ts";
import { parseReviewSummaryPage } from "../parsers/reviews.ts";
import { parseReview } from "../parsers/review.ts";
import { parseSearch } from "../parsers/search.ts";
import type { PageType } from "../schemas/pages.ts";
import { type FieldCounts, fieldCounts } from "../core/parser_health.ts";
import { displayedLocation } from "./delivery_location.ts";
import { type InterstitialForm, interstitialForm } from "../parsers/soft_interstitial.ts";

/**
 * Characters an answer may hold (its text, here; its JSON, at the route): real answers are far
 * smaller (a search of 200 items: about 300 KB), and a hostile page that makes a reader repeat
 * its text (nested matches, one heading in every item) must not cost a client a credit for half a
 * gigabyte, nor the process its memory.
 */
export const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

/**
 * The parsers a job may name: every page type's, the category listing (a search grid with its
 * department path), two partial readings, or `auto` (the detected type's).
 */
export type JobParser =
  | PageType
  | "category"
  | "identifiers"
  | "review_summary"
  | "auto"
  | "none";

export interface PageJob {
  parser: JobParser;
  /** The URL that answered (after redirects); parsers resolve links against it. */
  url: string;
  marketplace: string;
  status: number;
  contentType: string | null;
  /** Read the "Deliver to" line: a postcode was asked for. */
  wantLocation: boolean;
  /** Only for the single-review parser. */
  reviewId?: string;
}

export type Parsed =
  | { ok: true; value: unknown; type: PageType | null; fields: FieldCounts }
  | { ok: false; reason: ParseError["reason"]; message: string };

export interface PageOutcome {
  detection: Detection;
  location: string | null;
  /** A soft interstitial's form, which a browser submits to get the page asked for. */
  interstitial?: InterstitialForm | null;
  /** Absent when the page was not parsed: not a 2xx, a block page, Amazon's 404, or `none`. */
  parsed?: Parsed;
}

/**
 * What reading one page may cost (parsers/page_budget.ts). Real pages read at most a tenth of
 * their decoded length in text (a reviews page; most under 3%, over the corpus), so twice it, and
 * a MiB for the smallest, leaves room twentyfold. The deadline comes before the page pool's
 * 10 s timeout, so that a worker ends its own reading rather than being terminated mid-page (its
 * thread then ran on to the end, a minute for a hostile page); inline, it is the only bound.
 */
const TEXT_PER_CHAR = 2;
const MIN_TEXT_BUDGET = 1024 * 1024;
const READ_MS = 8_000;

export function readPage(job: PageJob, body: Uint8Array): PageOutcome {
  const { text: html, lossy } = decodePage(body, job.contentType);
  const chars = Math.max(MIN_TEXT_BUDGET, TEXT_PER_CHAR * html.length);
  try {
    return withinBudget({ chars, ms: READ_MS }, () => readHtml(job, html, lossy));
  } catch (e) {
    if (!(e instanceof PageTooCostly)) throw e;
    // Spent before the parser ran (detection, the delivery line): the page is still unread.
    return {
      detection: { kind: "unknown" },
      location: null,
      parsed: { ok: false, reason: "unrecognised", message: e.message },
    };
  }
}

function readHtml(job: PageJob, html: string, lossy: boolean): PageOutcome {
  const detection = detectPage(html);
  const location = job.wantLocation ? displayedLocation(html) : null;
  if (detection.kind === "blocked" && detection.reason === "soft_interstitial") {
    return { detection, location, interstitial: interstitialForm(html) };
  }
  const parseable = job.status >= 200 && job.status < 300 && detection.kind !== "blocked" &&
    detection.kind !== "not_found" && job.parser !== "none";
  if (!parseable) return { detection, location };
  // Text in the wrong charset reads as a page whose every title and name is U+FFFD: no answer.
  const unread = lossy && garbled(html)
    ? "the page's bytes are not in the character set it names"
    : otherSite(html, job.marketplace);
  if (unread) {
    return { detection, location, parsed: { ok: false, reason: "unrecognised", message: unread } };
  }
  return { detection, location, parsed: parse(job, html, detection) };
}

/**
 * Why the page is not the asked marketplace's, when it names another as its own (pageMarketplace),
 * else null. Answered, amazon.fr's page served for amazon.de came back charged, labelled
 * amazon.de, "En stock." (probe FP); only a page that names a known other marketplace is refused,
 * none for naming nothing.
 */
export function otherSite(html: string, code: string): string | null {
  const asked = MARKETPLACES.get(code);
  const shown = asked && pageMarketplace(html);
  return shown && asked && shown !== asked
    ? `the page is ${shown.host}'s, not ${asked.host}'s`
    : null;
}

/**
 * The page types a parser is given. These parsers read what a page shows and list the rest as
 * missing rather than refuse a page without it, so any other page (a redirect to a listing, an
 * error page, a reviews page at a product's URL) would be read as an empty answer and charged
 * (probe CN). The review summary is read off a reviews page or a product page. (The promotion
 * parser answers a page not marked as a promotion with a 404 of its own: an ended promotion.)
 */
const PAGES_READ: Partial<Record<JobParser, readonly PageType[]>> = {
  product: ["product"],
  identifiers: ["product"],
  review_summary: ["product", "reviews", "review"],
};

function parse(job: PageJob, html: string, detection: Detection): Parsed {
  const opts = { marketplace: job.marketplace, url: job.url };
  const type = detection.kind === "page" ? detection.type : null;
  const reads = PAGES_READ[job.parser];
  if (reads && !(type && reads.includes(type))) {
    const named = type?.replace("_", " ");
    const shown = named
      ? `${/^[aeiou]/.test(named) ? "an" : "a"} ${named} page`
      : "no page Shelf knows";
    const message = `the marketplace answered ${shown} where a ${job.parser} page was expected`;
    return { ok: false, reason: "unrecognised", message };
  }
  try {
    let value: unknown;
    switch (job.parser) {
      case "auto":
        if (detection.kind !== "page") {
          return { ok: false, reason: "unrecognised", message: "not a page type Shelf can read" };
        }
        value = PARSERS[detection.type](html, opts);
        break;
      case "category": // a search grid with its department path
        value = parseSearch(html, { ...opts, departments: true });
        break;
      case "identifiers":
        value = parseIdentifiers(html, opts);
        break;
      case "review_summary":
        value = parseReviewSummaryPage(html, opts);
        break;
      case "review":
        value = parseReview(html, { ...opts, reviewId: job.reviewId });
        break;
      case "none":
        throw new RangeError("unreachable: a 'none' job is not parsed");
      default:
        value = PARSERS[job.parser](html, opts);
    }
    // Bounded here, before the answer is copied to the serving thread: the route's own check of
    // its JSON comes only after that copy (and the stringifying) has been made.
    withoutControlChars(value, MAX_ANSWER_CHARS);
    return { ok: true, value, type, fields: readingFields(value) };
  } catch (e) {
    if (e instanceof ParseError) return { ok: false, reason: e.reason, message: e.message };
    // A parser bug, or an answer over MAX_ANSWER_CHARS, is the page's failure, not the process's:
    // it becomes an uncharged 502.
    return { ok: false, reason: "unrecognised", message: (e as Error)?.message ?? String(e) };
  }
}

/**
 * A reading's fields for parser health, by the rule the answer's `missing` uses: a product
 * reading's flags are no fields, an in_stock the page did not show is empty, and a 0 reviews_count
 * the page states is filled (upstream/envelopes.ts).
 */
function readingFields(value: unknown): FieldCounts {
  const fields = fieldCounts(value, READING_FLAGS);
  const product = value as Partial<ProductReading>;
  if (product.stock_unread) fields.set("in_stock", [0, 1]);
  if (product.no_reviews_stated) fields.set("reviews_count", [1, 0]);
  return fields;
}
