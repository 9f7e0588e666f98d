/** The one markdown table of `deno task proof`: a row per proof, its figures, pass or FAIL. */
export interface Row {
  proof: string;
  figures: Record<string, string | number>;
  verdict: string;
}

/** Every proof that reports, in table order; one that did not report failed. */
export const expected = [
  "1. quota, 1 process",
  "1. quota, 2 processes",
  "2. rate window",
  "3. faults (30% upstream failures)",
  "4. crash (kill -9 under load)",
  "5. hostile input (HTTP)",
  "5. hostile input (parsers)",
  "6. secrets and SSRF",
  "7. graceful stop (SIGTERM, calls finish)",
  "7. graceful stop (SIGTERM, calls outlast the drain)",
  "8. SSRF: hostile scrape paths (origin mode)",
  "8. SSRF: hostile scrape paths (live mode, via a recording proxy)",
  "8. cookie jar poisoning",
  "9. request bodies (unauthenticated crash)",
  "9. upstream gzip bomb",
  "9. upstream deadline (dripping body)",
  "10. free credits (SIGNUP=verify)",
  "10. sign-in lockout (parallel burst, two instances)",
];

export function proofTable(rows: Row[], proofs: string[]): string {
  const byName = new Map(rows.map((r) => [r.proof, r]));
  const cell = (s: string) => s.replace(/\|/g, "\\|");
  const lines = ["| proof | figures | result |", "|---|---|---|"];
  for (const name of [...proofs, ...rows.map((r) => r.proof).filter((p) => !proofs.includes(p))]) {
    const r = byName.get(name);
    const figures = r
      ? Object.entries(r.figures).map(([k, v]) => `${k}: ${v}`).join("; ")
      : "(no figures)";
    lines.push(`| ${cell(name)} | ${cell(figures)} | ${r ? r.verdict : "FAIL"} |`);
  }
  return lines.join("\n");
}
