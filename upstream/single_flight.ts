/**
 * Identical concurrent requests share one upstream fetch: while a fetch for a key is under way,
 * later callers get its outcome instead of starting another. Each caller waits only as long as its
 * own signal allows, and the shared fetch is aborted only once every caller that joined it has
 * given up: run under its first caller's signal, one call's deadline cut short another call that
 * had joined it later, as a 502 (probes ED, EF).
 */
interface Flight<T> {
  promise: Promise<T>;
  controller: AbortController;
  /** Callers still waiting that can give up; one without a signal never does. */
  waiting: number;
  endless: boolean;
}

export class SingleFlight<T> {
  private readonly running = new Map<string, Flight<T>>();

  run(key: string, work: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let flight = this.running.get(key);
    if (!flight) {
      const controller = new AbortController();
      const promise = work(controller.signal).finally(() => {
        if (this.running.get(key) === flight) this.running.delete(key);
      });
      flight = { promise, controller, waiting: 0, endless: false };
      this.running.set(key, flight);
    }
    if (!signal) {
      flight.endless = true;
      return flight.promise;
    }
    const f = flight;
    f.waiting++;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = () => {
        if (left) return false;
        left = true;
        f.waiting--;
        signal.removeEventListener("abort", giveUp);
        return true;
      };
      const giveUp = () => {
        if (!leave()) return;
        if (f.waiting === 0 && !f.endless) {
          // A caller arriving now starts a fetch of its own rather than joining an aborted one.
          if (this.running.get(key) === f) this.running.delete(key);
          f.controller.abort(signal.reason);
        }
        reject(signal.reason);
      };
      signal.addEventListener("abort", giveUp, { once: true });
      f.promise.then(
        (v) => leave() && resolve(v),
        (e) => leave() && reject(e),
      );
    });
  }
}
