/**
 * Delivery location through the marketplace's own "Deliver to" flow, as a visitor sets it:
 * 1. the home page (session cookies, and the pop-over's CSRF token in its `data-a-modal`);
 * 2. the pop-over's content (`get-rendered-address-selections`), which carries the token the
 *    address change wants (`CSRF_TOKEN : "…"`);
 * 3. POST `/portal-migration/hz/glow/address-change?actionSource=glow` with the postcode;
 * 4. the home page again, whose `#glow-ingress-line2` must now show the postcode.
 * A marketplace that refuses the postcode or shows another location is an error, never a page
 * priced for somewhere else. Only those two answers refuse the postcode (remembered for a while,
 * for every account, and counted in the account's budget of refused postcodes); a step that fails
 * (an error status, a robot check, a page without its "Deliver to" line) is LocationBlocked, which
 * the caller retries on a fresh session: a 503 from the address change had refused a postcode for
 * every account for 15 minutes (probe BI).
 */
import { ApiError } from "../core/api_error.ts";
import { cleanText } from "../parsers/control_chars.ts";
import { decodeHtml } from "../parsers/decode.ts";
import { addressChangeUrl, homeUrl, originOf } from "./urls.ts";

export interface Sent {
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** Whether the request carried the operator's signed-in session (CookieJar.signedIn). */
  signedIn?: boolean;
}
export type Send = (
  url: string,
  init: { method?: string; body?: string; headers?: Record<string, string>; xhr?: boolean },
) => Promise<Sent>;

export async function applyDeliveryLocation(send: Send, code: string, zip: string): Promise<void> {
  const home = await send(homeUrl(code), {});
  const homeHtml = decodeHtml(home.body, home.headers.get("content-type"));
  throwIfFailed(home, homeHtml, "home page");
  const pageToken = modalToken(homeHtml);

  const modalUrl = `${originOf(code)}/portal-migration/hz/glow/get-rendered-address-selections?` +
    "deviceType=desktop&pageType=Gateway&storeContext=NoStoreName&actionSource=desktop-modal";
  const modal = await send(modalUrl, {
    xhr: true,
    headers: pageToken ? { "anti-csrftoken-a2z": pageToken } : {},
  });
  const modalHtml = decodeHtml(modal.body);
  throwIfFailed(modal, modalHtml, "address selections");
  const token = /CSRF_TOKEN\s*:\s*["']([^"']+)["']/.exec(modalHtml)?.[1] ?? pageToken;

  const changed = await send(addressChangeUrl(code), {
    method: "POST",
    xhr: true,
    headers: {
      "content-type": "application/json",
      ...(token ? { "anti-csrftoken-a2z": token } : {}),
    },
    body: JSON.stringify({
      locationType: "LOCATION_INPUT",
      zipCode: zip,
      deviceType: "web",
      storeContext: "generic",
      pageType: "Gateway",
      actionSource: "glow",
    }),
  });
  const answerText = decodeHtml(changed.body);
  throwIfFailed(changed, answerText, "address change");
  const answer = safeJson(answerText);
  if (answer?.isValidAddress === 0 || answer?.isValidAddress === false) {
    throw new PostcodeRefused(zip);
  }

  const after = await send(homeUrl(code), {});
  const afterHtml = decodeHtml(after.body, after.headers.get("content-type"));
  throwIfFailed(after, afterHtml, "home page after the change");
  const shown = displayedLocation(afterHtml);
  // A prompt in its place ("Update location", "Atualizar CEP", "場所を更新する": no digit, not the
  // postcode) shows no location either: a failed step, tried again, not a refusal remembered for
  // every account (probe DW).
  const matches = shown !== null && locationMatches(shown, zip);
  if (shown === null || (!matches && !/\d/.test(shown))) {
    throw new LocationBlocked(false, "the home page after the change shows no delivery location");
  }
  if (!matches) {
    // Right after the change, so not a location moved since: the postcode is as good as refused.
    // A plain mismatch was neither remembered nor counted, and each call ran the flow again.
    throw new PostcodeRefused(
      zip,
      `Delivery location mismatch: The marketplace shows delivery to '${shown}' instead of postcode '${zip}'.`,
    );
  }
}

// How far past its id the displayed location is looked for: it is a short line ("New York 10001"),
// and a pattern run over the rest of a hostile page at each copy of the id costs time quadratic in
// the page's size.
const NEAR = 2_000;

/** The text of `#glow-ingress-line2` ("New York 10001"), or null when the page has none. */
export function displayedLocation(html: string): string | null {
  const m = nearFirst(
    html,
    "glow-ingress-line2",
    (near) => /id=["']glow-ingress-line2["'][^>]*>([\s\S]*?)<\/(?:span|div)>/.exec(near),
  );
  if (!m) return null;
  // Quoted in an error message a client reads (and a watch keeps as its last error): page text,
  // so cleaned of control characters, and no longer than any real place name.
  return cleanText(
    m[1].replace(/<[^>]*>/g, "").replace(/&nbsp;|\u00a0/g, " ").replace(
      /&[a-z]+;|[\u200b-\u200d]/g,
      "",
    )
      .replace(/\s+/g, " ").trim(),
    MAX_LOCATION_CHARS,
  );
}

/** Real "Deliver to" lines are a town and a postcode: at most a few dozen characters. */
const MAX_LOCATION_CHARS = 120;

/**
 * Whether a displayed location is the postcode's. The UK and Canada show only part of a
 * postcode ("London SW1A 1"), so a postcode with a space also matches on its first part.
 */
export function locationMatches(shown: string, zip: string): boolean {
  // Whole words only, separators aside: "E1" is not shown by "London E14 5", where a search of
  // the page's joined characters found it, and a page for another district was answered as the
  // postcode's (probe DT); "1000001" is shown by "Tokyo 100-0001", two words joined (probe DU).
  // Joins count for the whole postcode only: "Manchester M1 1" joined reads "M11", another
  // district, so a first part is looked for as one word (probe DW).
  const words = shown.toUpperCase().split(/[^A-Z0-9]+/).filter(Boolean).slice(0, 64);
  const joins = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    let joined = "";
    for (let j = i; j < Math.min(words.length, i + 4); j++) joins.add(joined += words[j]);
  }
  const compact = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]/g, "");
  const given = compact(zip);
  if (given && joins.has(given)) return true;
  // A first part alone only where a page shows just that much: a UK, Canadian or Irish one, which
  // holds a letter. "111 22" is not shown by "Stockholm 111 51" (probe DW).
  const outward = zip.trim().split(/\s+/);
  if (outward.length > 1 && /[A-Z]/i.test(outward[0]) && compact(outward[0]).length >= 2) {
    return words.includes(compact(outward[0]));
  }
  // Written without its space: a UK postcode's inward part is its last three characters, a
  // Canadian one's outward part its first three, an Irish Eircode's routing key its first three
  // (probe DX); a US ZIP+4 is shown as its five digits.
  const part = /^([A-Z]{1,2}\d[A-Z\d]?)\d[A-Z]{2}$/.exec(given)?.[1] ??
    /^([A-Z]\d[A-Z])\d[A-Z]\d$/.exec(given)?.[1] ??
    /^([AC-FHKNPRTV-Y]\d{2}|D6W)[0-9AC-FHKNPRTV-Y]{4}$/.exec(given)?.[1] ??
    /^(\d{5})\d{4}$/.exec(given)?.[1];
  return part !== undefined && words.includes(part);
}

export function mismatch(message: string): ApiError {
  return new ApiError(502, "upstream_error", `Delivery location mismatch: ${message}`);
}

/** The marketplace's address change refused the postcode: the same answer for a while after. */
/**
 * The marketplace would not deliver to the postcode: its address change refused it, or accepted
 * it and then showed another location (taken alike: asking again runs the same flow to the same
 * end).
 */
export class PostcodeRefused extends ApiError {
  constructor(
    zip: string,
    message =
      `Delivery location mismatch: The marketplace did not accept the delivery postcode '${zip}'.`,
  ) {
    super(502, "upstream_error", message);
  }
}

// The pop-over's token sits in an HTML-escaped JSON attribute: {"ajaxHeaders":{"anti-csrftoken-a2z":"…"}}.
function modalToken(html: string): string | undefined {
  return nearFirst(
    html,
    "anti-csrftoken-a2z",
    (near) => /"anti-csrftoken-a2z"\s*:\s*"([^"]+)"/.exec(near.replace(/&quot;/g, '"')),
  )?.[1];
}

/**
 * The first match of `find` in the text around one of the first few copies of `marker`: each
 * try reads at most NEAR characters, so a page of copies costs linear time.
 */
function nearFirst(
  html: string,
  marker: string,
  find: (near: string) => RegExpExecArray | null,
): RegExpExecArray | null {
  for (let at = html.indexOf(marker), tries = 0; at >= 0 && tries < 20; tries++) {
    const m = find(html.slice(Math.max(0, at - 40), at + NEAR));
    if (m) return m;
    at = html.indexOf(marker, at + marker.length);
  }
  return null;
}

/** A step answered with a robot check or an error status: the flow failed, nothing was refused. */
function throwIfFailed(res: Sent, html: string, step: string) {
  if (res.status === 503 || res.status === 429 || /validateCaptcha|opfcaptcha/.test(html)) {
    throw new LocationBlocked(true, `robot check or HTTP ${res.status} at the ${step}`);
  }
  if (res.status >= 400) throw new LocationBlocked(false, `HTTP ${res.status} at the ${step}`);
}

/**
 * The flow did not get through (`robot`: a robot check or a 503/429; else another failure): the
 * caller retries on a fresh session, as for a page, and the postcode is not taken as refused.
 */
export class LocationBlocked extends Error {
  constructor(readonly robot = true, detail = "robot check") {
    super(`delivery-location flow: ${detail}`);
    this.name = "LocationBlocked";
  }
}

/**
 * The address-change answer is a few hundred bytes of JSON; a larger body is not read as one.
 * It is parsed on the serving thread, where 8 MiB of nested arrays blocked every call for 0.65 s
 * and held 470 MB (probe BA).
 */
const MAX_ANSWER_JSON = 256 * 1024;

function safeJson(text: string): Record<string, unknown> | null {
  if (text.length > MAX_ANSWER_JSON) return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" ? v : null;
  } catch {
    return null;
  }
}
