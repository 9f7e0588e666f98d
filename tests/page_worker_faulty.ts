/**
 * The real page worker, except that it dies on a page whose URL contains "CRASH", never answers
 * for one that contains "HANG", and reads one that contains "SLOW" for 3 s of busy thread (one
 * with "PAUSE" for 0.2 s): the
 * failures of a worker that real pages cannot be relied on to cause. It keeps the real worker's
 * busy flag. Used by tests/page_workers_test.ts through PagePool's workerUrl.
 */
import { readPage } from "../upstream/page_read.ts";
import type { JobMessage } from "../upstream/page_worker.ts";

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<JobMessage>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  const { id, job, buffer, busy } = e.data;
  const flag = new Int32Array(busy ?? new SharedArrayBuffer(4));
  Atomics.store(flag, 0, 1);
  try {
    if (job.url.includes("CRASH")) throw new Error("page worker crashed on purpose");
    if (job.url.includes("HANG")) { while (true) { /* stuck, as a runaway regex would be */ } }
    if (job.url.includes("PAUSE")) {
      const end = Date.now() + 200;
      while (Date.now() < end) { /* a parse of a fifth of a second */ }
    }
    if (job.url.includes("SLOW")) {
      // Long enough that a loaded machine's late timers still look while it runs (at 1.5 s, CI
      // beside other work once found the thread already stopped).
      const end = Date.now() + 3_000;
      while (Date.now() < end) { /* a long synchronous parse: terminate() cannot stop it */ }
    }
    scope.postMessage({ id, outcome: readPage(job, new Uint8Array(buffer)) });
  } finally {
    Atomics.store(flag, 0, 0);
  }
};
