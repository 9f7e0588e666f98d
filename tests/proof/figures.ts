/**
 * Figures of the proof tests: printed by each test, and appended as JSON lines to the file named
 * by PROOF_FIGURES when `deno task proof` runs them, to be gathered into one table.
 * PROOF_FULL=1 (set by `deno task proof`) selects the issue's full numbers; `deno task test`
 * runs some of them scaled down so that the whole suite stays within a few minutes on 2 cores.
 */
export function full(): boolean {
  return Deno.env.get("PROOF_FULL") === "1";
}

/** `fullCount` under `deno task proof`, `quickCount` under `deno task test`. */
export function scaled(fullCount: number, quickCount: number): number {
  return full() ? fullCount : quickCount;
}

export function report(
  proof: string,
  figures: Record<string, string | number>,
  verdict = "pass",
): void {
  console.log(
    `[proof] ${proof}: ${Object.entries(figures).map(([k, v]) => `${k}=${v}`).join(", ")}`,
  );
  const file = Deno.env.get("PROOF_FIGURES");
  if (file) {
    Deno.writeTextFileSync(file, JSON.stringify({ proof, figures, verdict }) + "\n", {
      append: true,
    });
  }
}
