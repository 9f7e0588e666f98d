/**
 * The query parameters of a request URL, as `new URL(url).searchParams` gives them, without
 * parsing the whole URL: every metered call reads its query, and building a URL (host checks,
 * path normalisation) cost more than the parameters themselves.
 */
export function queryParams(url: string): URLSearchParams {
  const q = url.indexOf("?");
  if (q < 0) return new URLSearchParams();
  const hash = url.indexOf("#", q);
  // From the "?" on: the constructor drops exactly one leading "?", as URL's query does.
  return new URLSearchParams(hash < 0 ? url.slice(q) : url.slice(q, hash));
}
