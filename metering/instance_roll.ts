/**
 * Servers sharing one store must run the same plan catalog: each instance meters a call by the
 * plan it reads from its own PLANS_FILE, so one plan id meaning 20 credits on one instance and
 * 1,000 on another gives a user whichever limit the load balancer picks, with nothing said
 * (probe HE). Each server keeps an entry for itself in the store, renewed while it runs and
 * expiring when it stops being renewed, holding a digest of its catalog; at each renewal it reads
 * the others' and says on stderr, once per differing catalog, that they differ.
 */
import type { Log } from "../core/log.ts";
import { KV } from "./kv_layout.ts";
import type { Plans } from "./plans.ts";
import { randomHex } from "./api_key.ts";
import { sha256Hex } from "./sha256.ts";

/** Renewal interval and the life of an entry not renewed (a process killed). */
export const ROLL_TIMING = { everyMs: 20_000, lifeMs: 60_000 };

const DIGEST = /^[0-9a-f]{64}$/;

interface Entry {
  catalog: string;
  started_at: string;
  expires_at: number;
}

/** A digest of what a catalog means: each plan's fields, plans by id, groups in any order. */
export function catalogDigest(plans: Plans): string {
  const canonical = plans.ids().sort().map((id) => {
    const p = plans.get(id)!;
    return [p.id, p.credits, p.rate_limit_per_sec, p.max_keys, [...p.groups].sort()];
  });
  return sha256Hex(JSON.stringify(canonical));
}

export class InstanceRoll {
  readonly id = `ins_${randomHex(8)}`;
  readonly #catalog: string;
  readonly #startedAt = new Date().toISOString();
  readonly #told = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly kv: Deno.Kv,
    plans: Plans,
    private readonly log: Log,
    private readonly timing = ROLL_TIMING,
  ) {
    this.#catalog = catalogDigest(plans);
  }

  /** Enters this instance and compares catalogs now, then at every renewal. */
  start(): Promise<void> {
    const timer = setInterval(() => void this.renew(), this.timing.everyMs);
    Deno.unrefTimer(Number(timer));
    this.#timer = timer;
    return this.renew();
  }

  /** Writes this instance's entry and reports instances whose catalog differs from its own. */
  async renew(): Promise<void> {
    try {
      const entry: Entry = {
        catalog: this.#catalog,
        started_at: this.#startedAt,
        expires_at: Date.now() + this.timing.lifeMs,
      };
      await this.kv.set(KV.instance(this.id), entry, { expireIn: this.timing.lifeMs });
      const now = Date.now();
      for await (const { key, value } of this.kv.list<Partial<Entry>>({ prefix: KV.instances })) {
        // Only what a Shelf writes is read: whoever can write the store wrote these. An entry past
        // its life is passed over: the store removes expired entries only when it next sweeps
        // (about a minute later here), and a killed instance's catalog was reported meanwhile.
        const live = typeof value?.expires_at === "number" && value.expires_at > now;
        const other = live && typeof value?.catalog === "string" && DIGEST.test(value.catalog)
          ? value.catalog
          : null;
        if (key[1] === this.id || other === null || other === this.#catalog) continue;
        if (this.#told.has(other)) continue;
        this.#told.add(other);
        const started = typeof value?.started_at === "string" ? Date.parse(value.started_at) : NaN;
        const since = Number.isFinite(started)
          ? ` (started ${new Date(started).toISOString()})`
          : "";
        this.log.error(
          `another instance on this store${since} runs a different plan catalog (${
            other.slice(0, 12)
          } against this one's ${
            this.#catalog.slice(0, 12)
          }): give every instance the same PLANS_FILE, or each meters calls by its own plans`,
        );
      }
    } catch {
      // A store busy or gone now is seen by the calls and /readyz; the next renewal tries again.
    }
  }

  /** Leaves the roll: the entry is deleted rather than left to expire. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.kv.delete(KV.instance(this.id)).catch(() => {});
  }
}
