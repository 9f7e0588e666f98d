/** A PLANS_FILE with one plan for a proof test, written to a temporary file. */
import { GROUPS } from "../../schemas/endpoints.ts";

export async function plansFile(credits: number, ratePerSec: number): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".plans.json" });
  const plan = {
    id: "proof",
    credits,
    rate_limit_per_sec: ratePerSec,
    max_keys: 10,
    groups: [...GROUPS],
  };
  await Deno.writeTextFile(path, JSON.stringify({ plans: [plan] }));
  return path;
}
