/**
 * The plan catalog: the built-in one of INTERFACE.md, or a PLANS_FILE replacing it.
 */
import { z } from "zod";
import { GROUPS } from "../schemas/endpoints.ts";

export const PlanSchema = z.object({
  id: z.string().regex(/^[a-z0-9_-]{1,32}$/),
  credits: z.int().min(0),
  rate_limit_per_sec: z.int().min(1),
  // The account record holds every active key: 100 of them stay far below KV's 64 KiB value limit.
  max_keys: z.int().min(1).max(100),
  groups: z.array(z.enum(GROUPS as [string, ...string[]])),
});
export type Plan = z.infer<typeof PlanSchema>;

const CatalogSchema = z.object({ plans: z.array(PlanSchema).min(1) });

const ALL_BUT_SCRAPE = ["products", "reviews", "sellers", "merchandising", "utility"];
const ALL = [...ALL_BUT_SCRAPE, "scrape"];

export const BUILTIN_PLANS: Plan[] = [
  { id: "free", credits: 50, rate_limit_per_sec: 1, max_keys: 1, groups: ALL_BUT_SCRAPE },
  { id: "starter", credits: 5_000, rate_limit_per_sec: 5, max_keys: 3, groups: ALL },
  { id: "growth", credits: 50_000, rate_limit_per_sec: 20, max_keys: 10, groups: ALL },
  { id: "scale", credits: 500_000, rate_limit_per_sec: 100, max_keys: 50, groups: ALL },
];

/** The plan a dashboard sign-up, and an account the operator creates without one, starts on. */
export const SIGNUP_PLAN = "free";

export class Plans {
  readonly #byId: Map<string, Plan>;
  constructor(plans: Plan[]) {
    this.#byId = new Map(plans.map((p) => [p.id, p]));
  }
  get(id: string): Plan | undefined {
    return this.#byId.get(id);
  }
  ids(): string[] {
    return [...this.#byId.keys()];
  }
}

/** The catalog in a PLANS_FILE's JSON text; throws TypeError naming what is wrong. */
export function parsePlans(json: string): Plans {
  const r = CatalogSchema.safeParse(JSON.parse(json));
  if (!r.success) {
    throw new TypeError(
      `Cannot load plans as the catalog is invalid: ${r.error.issues[0].path.join(".")}: ${
        r.error.issues[0].message
      }`,
    );
  }
  return new Plans(r.data.plans);
}

export function builtinPlans(): Plans {
  return new Plans(BUILTIN_PLANS);
}
