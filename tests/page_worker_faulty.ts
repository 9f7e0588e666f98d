/**
 * The real page worker, except that it dies on a page whose URL contains "CRASH" and never
 * answers for one that contains "HANG": the two failures of a worker that real pages cannot be
 * relied on to cause. Used by tests/page_workers_test.ts through PagePool's workerUrl.
 */
import { readPage } from "../upstream/page_read.ts";
import type { JobMessage } from "../upstream/page_worker.ts";

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<JobMessage>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  const { id, job, buffer } = e.data;
  if (job.url.includes("CRASH")) throw new Error("page worker crashed on purpose");
  if (job.url.includes("HANG")) { while (true) { /* stuck, as a runaway regex would be */ } }
  scope.postMessage({ id, outcome: readPage(job, new Uint8Array(buffer)) });
};
