/**
 * The query parameters of a request URL, each name with its values in order, exactly as
 * `new URL(url).searchParams` gives them. Every metered call reads its query: building a URL
 * (host checks, path normalisation) and a URLSearchParams cost more than reading the usual
 * short, plain query directly, so only an unusual one takes that road.
 */
export type Query = Map<string, string[]>;

export function queryParams(url: string): Query {
  const out: Query = new Map();
  const q = url.indexOf("?");
  if (q < 0) return out;
  let end = url.indexOf("#", q);
  if (end < 0) end = url.length;
  // The URL parser drops tabs and newlines anywhere; leave such a query to it.
  if (CONTROL.test(url)) return viaUrl(url);
  for (let at = q + 1; at < end;) {
    let amp = url.indexOf("&", at);
    if (amp < 0 || amp > end) amp = end;
    if (amp > at) {
      let eq = url.indexOf("=", at);
      if (eq < 0 || eq > amp) eq = amp;
      const name = decode(url.slice(at, eq));
      const value = eq < amp ? decode(url.slice(eq + 1, amp)) : "";
      // A "%" that is not a valid UTF-8 escape: the standard decoder keeps or replaces it.
      if (name === null || value === null) return viaUrl(url);
      add(out, name, value);
    }
    at = amp + 1;
  }
  return out;
}

const CONTROL = /[\t\n\r]/;

function decode(s: string): string | null {
  if (s.includes("+")) s = s.replaceAll("+", " ");
  if (!s.includes("%")) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

function viaUrl(url: string): Query {
  const out: Query = new Map();
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    return out;
  }
  for (const [name, value] of params) add(out, name, value);
  return out;
}

function add(query: Query, name: string, value: string): void {
  const values = query.get(name);
  if (values) values.push(value);
  else query.set(name, [value]);
}

/**
 * The last value of query parameter `name`, in linear time: Hono's c.req.query decodes a value
 * that does not decode one escape at a time, an exception each (probe BX: 15-16 ms a request for
 * a 16 KB `token`, without a key).
 */
export function queryValue(url: string, name: string): string | undefined {
  return queryParams(url).get(name)?.at(-1);
}

/**
 * Segment `index` of a routed path (routes/request_target.ts requestPath, decoded once), for a
 * route parameter: c.req.param decodes it again the same slow way (probe BX: 12-14 ms).
 */
export function pathSegment(path: string, index: number): string {
  return path.split("/")[index] ?? "";
}
