/**
 * Names a page from its raw HTML with string and regex checks only (no DOM): cheap enough to
 * run on every upstream body before choosing a parser.
 *
 * The page's own type comes first, from Amazon's page-type token (`ue_pty`, `pageType=` in the
 * location modal) or, for fragments and pages without one, from markup ids that only that page
 * type has. Block pages are looked for only after that: their phrases ("Something went wrong",
 * "sign in") also occur in the scripts of ordinary pages.
 */
import type { PageType } from "../schemas/pages.ts";
import { isSoftInterstitial } from "./soft_interstitial.ts";
import { before, firstInLink, someTag, startTags, startTagWhere } from "./page_text.ts";

export type BlockReason =
  | "robot_check"
  | "captcha"
  | "soft_interstitial"
  | "signin_wall"
  | "service_unavailable";
export type Detection =
  | { kind: "page"; type: PageType }
  | { kind: "blocked"; reason: BlockReason }
  | { kind: "not_found" }
  | { kind: "unknown" };

export function detectPage(html: string): Detection {
  if (typeof html !== "string" || !html.includes("<")) return { kind: "unknown" };
  const type = typeFromToken(html) ?? typeFromMarkup(html);
  if (type) return { kind: "page", type };
  const reason = blockReason(html);
  if (reason) return { kind: "blocked", reason };
  if (isNotFound(html)) return { kind: "not_found" };
  return { kind: "unknown" };
}

// `ue_pty='Detail'` (`DetailAW` on mobile web), `pageType: "Search"`, `pageType=Search` / `pageType&#x3D;Search` in URLs.
/**
 * The page's own type: quoted in a script (`ue_pty='Detail'`, which text cannot forge: Amazon
 * escapes quotes there), or in the query of one of the page's own links (`pageType=Detail`): a
 * listing title ending in `pageType=CustomerReviews` made a product page a reviews page (probes
 * AY, BB).
 */
const PAGE_TOKEN =
  /(?:\bue_pty\s*=\s*|\bpageType\s*:\s*)["'](Detail|DetailAW|Search|OfferListing|CustomerReviews|zeitgeist)["']|\bpageType(?:=|&#x3D;|&#61;)(Detail|DetailAW|Search|OfferListing|CustomerReviews|zeitgeist)\b/g;

function typeFromToken(html: string): PageType | null {
  const m = firstInLink(html, PAGE_TOKEN, (m) => m[1] !== undefined);
  if (!m) return null;
  switch (m[1] ?? m[2]) {
    case "Detail":
    case "DetailAW": // the mobile web ("a-touch a-mobile") detail page
      return "product";
    case "OfferListing":
      return "offers";
    case "zeitgeist":
      return "bestsellers";
    case "CustomerReviews":
      return isSingleReview(html) ? "review" : "reviews";
    default:
      return isStorefront(html) ? "seller_products" : "search";
  }
}

/** A single review (`/gp/customer-reviews/R…`) shares the reviews list's page-type token. */
function isSingleReview(html: string): boolean {
  return /\bue_url\s*=\s*['"]\/gp\/customer-reviews\/R|rel=["']?canonical["']?\s+href=["'][^"']*\/gp\/customer-reviews\/R/
    .test(html);
}

/** A seller's storefront is a search restricted to one merchant (`s?me=<id>`). */
function isStorefront(html: string): boolean {
  return firstInLink(html, /storeContext(?:=|&#x3D;)merchant-items/g) !== null ||
    someTag(
      html,
      "input",
      (a) =>
        a.get("name") === "me" && before(a, "name", "value") &&
        /^[A-Z0-9]{6,}/.test(a.get("value")!),
    );
}

/** A promotion page's canonical link (`<link rel=canonical href=…/promotion/psp/ID>`). */
function hasPromotionCanonical(html: string): boolean {
  return html.includes("/promotion/psp/") &&
    someTag(html, "link", (a) =>
      a.get("rel")?.toLowerCase() === "canonical" &&
      /\/promotion\/psp\/[A-Z0-9]/.test(a.get("href") ?? ""));
}

// Pages and fragments without a page-type token, in an order where no earlier marker can occur
// on a later type's page (seller, promotion and deal pages embed product links and cards). The
// product page comes first: it embeds the offers popover's container and its top reviews, and
// no other page carries its title's id (stripped of its token, nearly every corpus product page
// was named offers or reviews; probe IB). The search page next: it embeds the popover's empty
// shell too (13 of 20 corpus search pages and the category page were named offers), and of the
// saved pages only searches, categories and storefronts carry its result cards.
const MARKUP: [RegExp | ((html: string) => boolean), PageType][] = [
  [/id=["']productTitle["']|id=["']dp-container["']/, "product"],
  [/data-component-type=["']s-search-result["']|id=["']s-results-list-atf["']/, "search"],
  [
    /id=["'](?:aod-container|all-offers-display|aod-offer|aod-pinned-offer|olpOfferList)["']/,
    "offers",
  ],
  [
    /id=["'](?:seller-name|seller-info-feedback-summary|page-section-detail-seller-info)["']/,
    "seller_profile",
  ],
  [
    (html) => /id=["']promotionTitle["']/.test(html) || hasPromotionCanonical(html),
    "promotion",
  ],
  [/id=["']octopus-dlp-asin-stream["']|class=["'][^"']*octopus-dlp-asin-section/, "deal_products"],
  [
    /data-testid=["'](?:grid-)?deal-card["']|data-deal-id=|class=["'][^"']*DealCard-module__|id=["']grid-main-container["']/,
    "deals",
  ],
  [/id=["']cm_cr-review_list["']|data-hook=["']review["']/, "reviews"],
  [/id=["']zg_banner_text["']|id=["']gridItemRoot["']/, "bestsellers"],
];

function typeFromMarkup(html: string): PageType | null {
  for (const [marker, type] of MARKUP) {
    if (typeof marker === "function" ? marker(html) : marker.test(html)) {
      return type === "search" && isStorefront(html) ? "seller_products" : type;
    }
  }
  return null;
}

// The captcha form posts to /errors/validateCaptcha in every language; the prompt text is a
// fallback for a variant without that form.
const CAPTCHA =
  /validateCaptcha|opfcaptcha|Type the characters you see|Geben Sie die Zeichen|Saisissez les caractères|Introduzca los caracteres|Inserisci i caratteri|Digite os caracteres|表示されている文字を入力/i;
// Read in each `<form` tag (page_text.ts's startTags), not as `/<form[^>]*(?:…)/` over the page,
// which retries `[^>]*` from every "<form" (quadratic on a page of them and no ">").
const SIGNIN_FORM = /name=["']signIn["']|id=["']ap_login_form["']|action=["'][^"']*\/ap\/signin/i;
// In the title only: current pages of every type carry "Something went wrong" in the messages of
// their scripts, and any page this detector does not know would otherwise be a block, retried and
// counted towards pausing the marketplace. Both real 503 pages say it in their title.
const UNAVAILABLE =
  /<title>[^<]{0,200}?(?:Tut uns Leid|Something went wrong|Un problème est survenu|Se ha producido un error|Si è verificato un errore)/i;

function blockReason(html: string): BlockReason | null {
  if (CAPTCHA.test(html)) {
    if (isRobotCheck(html)) return "robot_check";
    return isSoftInterstitial(html) ? "soft_interstitial" : "captcha";
  }
  if (startTagWhere(html, "form", SIGNIN_FORM)) return "signin_wall";
  if (isNotFound(html)) return null;
  if (UNAVAILABLE.test(html)) return "service_unavailable";
  return null;
}

/** A `<title>` that opens with "Robot Check" (each title tag read once: see SIGNIN_FORM). */
function isRobotCheck(html: string): boolean {
  const after = /\s*Robot Check/iy;
  for (const { end, closed } of startTags(html, "title", true)) {
    after.lastIndex = end;
    if (closed && after.test(html)) return true;
  }
  return false;
}

// The dogs-of-Amazon 404 says "Looking for something?" (and links cs_404); the 503 links cs_503.
const NOT_FOUND =
  /cs_404|Looking for something\?|Sorry! We couldn.t find that page|Suchen Sie etwas\?|Vous cherchez quelque chose \?|¿Buscas algo\?|Cerchi qualcosa\?/i;

function isNotFound(html: string): boolean {
  return NOT_FOUND.test(html);
}
