/**
 * A page worker (page_pool.ts): receives a body's bytes (transferred, not copied) with its job,
 * answers with the plain-data outcome of readPage. Nothing else runs here.
 */
import { type PageJob, readPage } from "./page_read.ts";
import { lowerThisThreadsPriority } from "./worker_priority.ts";

export interface JobMessage {
  id: number;
  job: PageJob;
  buffer: ArrayBuffer;
  /** One Int32: 1 while this thread reads a page, 0 after (see PagePool's draining slots). */
  busy: SharedArrayBuffer;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<JobMessage>) => void) | null;
  postMessage(message: unknown): void;
};

lowerThisThreadsPriority();

scope.onmessage = (e) => {
  const { id, job, buffer, busy } = e.data;
  const flag = new Int32Array(busy);
  Atomics.store(flag, 0, 1);
  try {
    scope.postMessage({ id, outcome: readPage(job, new Uint8Array(buffer)) });
  } finally {
    Atomics.store(flag, 0, 0);
  }
};
