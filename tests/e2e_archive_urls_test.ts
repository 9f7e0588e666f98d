/**
 * Replay archives match URLs the way INTERFACE.md ("Replay archives") says: host lower-cased,
 * parameters sorted, and exactly the listed tracking parameters dropped. Each listed parameter on
 * a recorded page still finds the recording; any other parameter names another page (an
 * uncharged 502). Real HTTP against the demo's archive of real pages (issue 18 sweep).
 */
import assert from "node:assert/strict";
import { startRig } from "./upstream_harness.ts";

const ARCHIVE = new URL("../demo/sample.warc.gz", import.meta.url).pathname;
const TRACKING = [
  "ref",
  "ref_",
  "qid",
  "sr",
  "crid",
  "sprefix",
  "th",
  "psc",
  "dib",
  "dib_tag",
  "_encoding",
  "content-id",
  "pd_rd_w",
  "pd_rd_r",
  "pf_rd_p",
  "pf_rd_r",
];

const scrape = (url: string) => `/v1/scrape?url=${encodeURIComponent(url)}`;

Deno.test("archive: every listed tracking parameter is ignored, the host's case too; others name another page", async () => {
  await using rig = await startRig({ upstream: `archive:${ARCHIVE}`, plan: "scale" });
  for (const name of TRACKING) {
    const r = await rig.call(scrape(`https://www.amazon.com/gp/bestsellers/hi?${name}=x1`));
    assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
  }
  const mixed = await rig.call(
    scrape("https://WWW.Amazon.COM/s?qid=1&k=portable+charger&sr=8-1&ref=sr_pg_1"),
  );
  assert.equal(mixed.status, 200, JSON.stringify(mixed.body));
  for (const other of ["page=2", "pg=2", "k=tea", "refx=1", "pd_r=1"]) {
    const r = await rig.call(scrape(`https://www.amazon.com/gp/bestsellers/hi?${other}`));
    assert.equal(r.status, 502, `${other} is not tracking: ${JSON.stringify(r.body)}`);
    assert.equal(r.headers.get("x-credits-cost"), "0");
  }
});
