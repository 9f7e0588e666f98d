/**
 * Deno.serve, started again when its listener fails. Deno.serve ends for good when accepting a
 * connection fails (EMFILE once clients hold every file descriptor the process may open, which
 * anyone can do with idle connections, since Deno.serve times none of them out): its `finished`
 * rejects, which left unhandled ended the process, and its listener is closed. Here a failed
 * server is reported and a new one listens on the same address after a back-off (0.1 s doubling
 * to 5 s, back to 0.1 s after a minute of health), so the service answers again as soon as
 * descriptors are free, and only a shutdown stops it.
 *
 * A failed server stops accepting, but the connections it accepted are still served (a client's
 * keep-alive connection saw nothing): a shutdown waits for every server started, not only the
 * newest, else a stop after one such episode cut those clients' calls at once, charged and
 * unanswered (probe AM).
 *
 * Only after the first listen: a server that cannot listen at all (the port taken by another
 * process, an address this machine does not have, a name that does not resolve) is a start-up
 * error, not something to wait out. `ready` then rejects, no retry follows, and the caller ends
 * start-up (main.ts: one line naming PORT and HOST, exit code 1).
 */

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 5_000;
const HEALTHY_MS = 60_000;

export interface ServeEvents {
  /** The server is listening; `restarts` is 0 the first time. */
  listening(addr: Deno.NetAddr, restarts: number): void;
  /** The server failed (or could not start again); another try follows in `retryMs`. */
  failed(error: unknown, retryMs: number): void;
}

export interface SupervisedServer {
  /** The first listen: resolves with its address, or rejects with why it could not listen. */
  ready: Promise<Deno.NetAddr>;
  /** Stops accepting, lets requests under way finish, and ends the restarts. */
  shutdown(): Promise<void>;
}

export function supervisedServe(
  options: { port: number; hostname: string },
  handler: Deno.ServeHandler<Deno.NetAddr>,
  events: ServeEvents,
): SupervisedServer {
  /** Every server started whose connections may still be served: failed ones included. */
  const servers = new Set<Deno.HttpServer<Deno.NetAddr>>();
  let stopping = false;
  let restarts = 0;
  let delay = FIRST_DELAY_MS;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let listened = false;
  let settle!: { resolve(a: Deno.NetAddr): void; reject(e: unknown): void };
  const ready = new Promise<Deno.NetAddr>((resolve, reject) => (settle = { resolve, reject }));
  ready.catch(() => {}); // the caller awaits it; no unhandled rejection if it does not

  const fail = (error: unknown, startedAt: number) => {
    if (stopping) return;
    if (!listened) {
      // Never listened: nothing to restart. Fatal, reported once through `ready`.
      stopping = true;
      settle.reject(error);
      return;
    }
    if (Date.now() - startedAt >= HEALTHY_MS) delay = FIRST_DELAY_MS;
    events.failed(error, delay);
    retry = setTimeout(() => {
      restarts++;
      start();
    }, delay);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  };

  const start = () => {
    if (stopping) return;
    const startedAt = Date.now();
    const n = restarts;
    try {
      const s = Deno.serve({
        ...options,
        onListen: (addr) => {
          if (!listened) {
            listened = true;
            settle.resolve(addr);
          }
          events.listening(addr, n);
        },
      }, handler);
      servers.add(s);
      s.finished.then(() => servers.delete(s), (e) => fail(e, startedAt));
    } catch (e) {
      fail(e, startedAt); // the address cannot be bound yet (no descriptor free, still in use)
    }
  };

  start();
  return {
    ready,
    async shutdown() {
      stopping = true;
      clearTimeout(retry);
      await Promise.allSettled([...servers].map((s) => s.shutdown()));
    },
  };
}
