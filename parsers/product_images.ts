/**
 * Product images, from the image block's `'colorImages': { 'initial': [...] }` script data, or,
 * on pages without it (older book pages, scripts stripped by a browser save), from the landing
 * image's `data-a-dynamic-image` map.
 *
 * Widths and heights are given only where the page states them unambiguously: the `hiRes` and
 * `large` URLs of the script data come without dimensions (null). The dynamic-image map pairs each
 * URL with two numbers whose order differs between layouts, so a pair is read as width × height
 * only when the URL's own size code (`_SX342_` = width, `_SY355_` = height) says which is which.
 * Every URL passes dom.ts's `imageUrl` (http(s) on Amazon's image hosts); one that does not is
 * left out, as if the page had not named it.
 */
import type { Image } from "../schemas/resources.ts";
import { balancedJson } from "./page_text.ts";
import { imageUrl } from "./dom.ts";

interface ColorImage {
  hiRes?: unknown;
  large?: unknown;
  thumb?: unknown;
}

const MAX_IMAGES_JSON = 1 << 20;
const MAX_IMAGES_DEPTH = 16;
/** A dynamic-image map holds a few renditions of one image (a few hundred bytes). */
const MAX_DYNAMIC_IMAGE = 64 * 1024;

/** Images of the script data at `html`'s `'colorImages'`, or null when the page has none. */
export function colorImages(html: string): Image[] | null {
  const key = html.indexOf("'colorImages'");
  if (key < 0) return null;
  const initial = html.indexOf("'initial'", key);
  if (initial < 0 || initial - key > 200) return null;
  const start = html.indexOf("[", initial);
  if (start < 0) return null;
  // Bounded: the corpus's largest is 11 KB, 4 deep; 8 MB of nested brackets made JSON.parse hold
  // about 500 MB for a page that answered no images (probe AZ).
  const json = balancedJson(html, start, MAX_IMAGES_JSON, MAX_IMAGES_DEPTH);
  if (!json) return null;
  let items: unknown;
  try {
    items = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(items)) return null;
  return items.flatMap((item: ColorImage) => {
    const url = imageUrl(str(item?.hiRes)) || imageUrl(str(item?.large));
    return url
      ? [{ url, width: null, height: null, thumbnail: imageUrl(str(item?.thumb)) || url }]
      : [];
  });
}

/** The image of a `data-a-dynamic-image` map: its largest rendition, thumbnailed by its smallest. */
export function dynamicImage(json: string): Image | null {
  if (json.length > MAX_DYNAMIC_IMAGE) return null;
  let map: unknown;
  try {
    map = JSON.parse(json);
  } catch {
    return null;
  }
  if (!map || typeof map !== "object") return null;
  const entries = Object.entries(map as Record<string, unknown>)
    .map(([url, pair]): [string, unknown] => [imageUrl(url), pair])
    .filter((e): e is [string, [number, number]] => e[0] !== "" && isPair(e[1]))
    .sort((a, b) => a[1][0] * a[1][1] - b[1][0] * b[1][1]);
  if (entries.length === 0) return null;
  const [url, pair] = entries[entries.length - 1];
  const { width, height } = dimensionsOf(url, pair);
  return { url, width, height, thumbnail: entries[0][0] };
}

function dimensionsOf(
  url: string,
  [a, b]: [number, number],
): { width: number | null; height: number | null } {
  if (a === b) return { width: a, height: b };
  const sx = /_SX(\d+)/.exec(url)?.[1];
  if (sx && (Number(sx) === a || Number(sx) === b)) {
    return Number(sx) === a ? { width: a, height: b } : { width: b, height: a };
  }
  const sy = /_SY(\d+)/.exec(url)?.[1];
  if (sy && (Number(sy) === a || Number(sy) === b)) {
    return Number(sy) === a ? { width: b, height: a } : { width: a, height: b };
  }
  return { width: null, height: null };
}

function isPair(v: unknown): v is [number, number] {
  return Array.isArray(v) && v.length === 2 && Number.isInteger(v[0]) && Number.isInteger(v[1]);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/**
 * The mobile web page's images (`a-touch a-mobile`), which has no script data: the media block's
 * carousel (`altImage` elements, in page order) names the images, and the full-screen carousel
 * (`immersive-carousel-img`) holds each one's largest (`_SL1500_`) and thumbnail (`_SS…_`) copy.
 * Read from each `data-a-hires` and the tag it sits in, linear in the page whatever it holds: tag
 * starts are walked forward once (looking back from each attribute would rescan a long tag
 * holding thousands of them), a tag longer than MAX_TAG is not read for its class, and the
 * carousel's ids are checked in a set.
 */
export function mobileImages(html: string): Image[] {
  const carousel: string[] = [];
  const inCarousel = new Set<string>();
  const large = new Map<string, string>();
  const thumbs = new Map<string, string>();
  const ATTR = 'data-a-hires="';
  let lt = -1;
  let nextLt = html.indexOf("<");
  for (let at = html.indexOf(ATTR); at >= 0; at = html.indexOf(ATTR, at + 1)) {
    const end = html.indexOf('"', at + ATTR.length);
    if (end < 0) break;
    const url = imageUrl(html.slice(at + ATTR.length, end));
    while (nextLt >= 0 && nextLt < at) {
      lt = nextLt;
      nextLt = html.indexOf("<", lt + 1);
    }
    const tag = lt >= 0 && at - lt <= MAX_TAG ? html.slice(lt, at) : "";
    const cls = /\bclass="([^"]*)"/.exec(tag)?.[1] ?? "";
    const id = imageId(url);
    if (!id) continue;
    if (/\baltImage\b/.test(cls)) {
      if (!inCarousel.has(id)) {
        inCarousel.add(id);
        carousel.push(id);
      }
      if (!large.has(id)) large.set(id, url);
    } else if (/\bimmersive-carousel-img/.test(cls)) {
      if (/\._SS\d+_\./.test(url)) thumbs.set(id, url);
      else large.set(id, url);
    }
  }
  return carousel.map((id) => {
    const url = large.get(id)!;
    return { url, width: null, height: null, thumbnail: thumbs.get(id) ?? url };
  });
}

/** The longest start tag read for its class (the mobile page's image tags: under 1,000). */
const MAX_TAG = 8_192;

/** "41OppoDa9PL" of ".../images/I/41OppoDa9PL._AC_SL1500_.jpg". */
function imageId(url: string): string {
  return /\/images\/I\/([^./]+)\./.exec(url)?.[1] ?? "";
}
