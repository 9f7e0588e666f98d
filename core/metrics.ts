/**
 * The Prometheus metrics of one process (INTERFACE.md "Operations"), on prom-client's own
 * registry rather than its global one, so that two apps in one process (tests) keep apart.
 * Everything that counts imports this module; only `/metrics` renders it.
 */
import client from "prom-client";
import { type FieldCounts, ParserHealth } from "./parser_health.ts";

export class Metrics {
  readonly registry = new client.Registry();
  readonly health = new ParserHealth();

  readonly httpRequests = new client.Counter({
    name: "shelf_http_requests_total",
    help: "HTTP requests answered, by route pattern and status.",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new client.Histogram({
    name: "shelf_http_request_duration_seconds",
    help: "Time from request to response headers, by route pattern.",
    labelNames: ["route"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly creditsCharged = new client.Counter({
    name: "shelf_credits_charged_total",
    help:
      "Credits charged for successful calls and watch refreshes (refunds of failed calls are not counted).",
    registers: [this.registry],
  });
  readonly upstreamRequests = new client.Counter({
    name: "shelf_upstream_requests_total",
    help: "Upstream HTTP exchanges, by marketplace and outcome.",
    labelNames: ["marketplace", "outcome"] as const,
    registers: [this.registry],
  });
  readonly upstreamFailures = new client.Counter({
    name: "shelf_upstream_failures_total",
    help:
      "Upstream attempts that failed (blocked, connection, timeout, …), by marketplace and outcome.",
    labelNames: ["marketplace", "outcome"] as const,
    registers: [this.registry],
  });
  readonly storeWriteRefusals = new client.Counter({
    name: "shelf_store_write_refusals_total",
    help:
      "Calls answered 503 because the store refused their write after every retry, or at once where a write is not retried (a full disk, or another process holding a shared KV file's lock).",
    registers: [this.registry],
  });
  readonly strayErrors = new client.Counter({
    name: "shelf_stray_errors_total",
    help:
      "Errors that escaped every handler (a promise rejected unhandled, a callback that threw): each is a bug; the process logged it and went on.",
    registers: [this.registry],
  });
  readonly parseFields = new client.Counter({
    name: "shelf_parse_fields_total",
    help:
      "Fields of parsed pages, by page type, marketplace, field and whether it came back filled.",
    labelNames: ["page_type", "marketplace", "field", "filled"] as const,
    registers: [this.registry],
  });

  // Read when scraped. Under a flood of stalled connections the process grows while every
  // request counter looks healthy; these show it (Prometheus's standard names).
  readonly residentMemory = new client.Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory of the process (all its threads: serving, page workers, store).",
    registers: [this.registry],
    collect() {
      this.set(Deno.memoryUsage().rss);
    },
  });
  // Deno reads /proc/self only with --allow-all, which `deno task start` does not give: there
  // the series is left out, since a gauge never set would read 0 descriptors.
  readonly openFds = openFds() === null ? null : new client.Gauge({
    name: "process_open_fds",
    help: "Open file descriptors of the process (connections among them); Linux only.",
    registers: [this.registry],
    collect() {
      const n = openFds();
      if (n !== null) this.set(n);
    },
  });

  /** Counts one parse's fields in the counter and in the hourly fill-rate buckets. */
  recordParse(pageType: string, marketplace: string, counts: FieldCounts, now = Date.now()): void {
    for (const [field, [filled, empty]] of counts) {
      if (filled) {
        this.parseFields.inc({ page_type: pageType, marketplace, field, filled: "true" }, filled);
      }
      if (empty) {
        this.parseFields.inc({ page_type: pageType, marketplace, field, filled: "false" }, empty);
      }
    }
    this.health.add(pageType, marketplace, counts, now);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The process's metrics; main.ts and the tests' servers share this one per process. */
export const metrics = new Metrics();

/** Entries of /proc/self/fd, or null where there is none to read (not Linux, no permission). */
function openFds(): number | null {
  try {
    let n = 0;
    for (const _ of Deno.readDirSync("/proc/self/fd")) n++;
    return n;
  } catch {
    return null;
  }
}
