/**
 * The headers Shelf sends to the marketplace (upstream/browser_headers.ts) are the ones a desktop
 * Chrome sends: on a page reached by a link on the same site (a session starts on the home page),
 * and on the page's own in-page XHR calls (location pop-over, offers fragment). Fetch metadata a
 * browser never sends on an XHR (Sec-Fetch-User, Upgrade-Insecure-Requests) is not sent, and the
 * page scripts' X-Requested-With is. The fake marketplace does not record request headers, so
 * these are checked on the functions the transport calls.
 */
import assert from "node:assert/strict";
import { navigationHeaders, xhrHeaders } from "../upstream/browser_headers.ts";

Deno.test("browser headers: a page navigation carries Chrome's fetch metadata for a same-site link", () => {
  for (const code of ["US", "DE", "JP"]) {
    const h = navigationHeaders(code);
    assert.equal(h["sec-fetch-site"], "same-origin", code);
    assert.equal(h["sec-fetch-mode"], "navigate", code);
    assert.equal(h["sec-fetch-dest"], "document", code);
    assert.equal(h["sec-fetch-user"], "?1", code);
    assert.equal(h["upgrade-insecure-requests"], "1", code);
    assert.match(h["user-agent"], /Chrome\/\d+\.0\.0\.0 Safari\/537\.36$/, code);
    assert.equal(h["x-requested-with"], undefined, code);
  }
});

Deno.test("browser headers: an in-page XHR is same-origin cors with X-Requested-With, without the navigation-only headers", () => {
  for (const code of ["US", "DE", "JP"]) {
    const h = xhrHeaders(code);
    const nav = navigationHeaders(code);
    assert.equal(h["x-requested-with"], "XMLHttpRequest", code);
    assert.equal(h["sec-fetch-site"], "same-origin", code);
    assert.equal(h["sec-fetch-mode"], "cors", code);
    assert.equal(h["sec-fetch-dest"], "empty", code);
    assert.ok(!("sec-fetch-user" in h), `${code}: Sec-Fetch-User is sent on user navigations only`);
    assert.ok(!("upgrade-insecure-requests" in h), code);
    assert.equal(h["accept"], "text/html,*/*", code);
    for (const same of ["user-agent", "accept-language", "sec-ch-ua", "sec-ch-ua-platform"]) {
      assert.equal(h[same], nav[same], `${code}: ${same} as on the page`);
    }
  }
});
