/** One data call over HTTP, its body read as text (kept for the shape and secrets checks). */
export interface Answer {
  status: number;
  text: string;
  headers: Headers;
  /** Client clock (ms since epoch) when the request left and when the answer was read. */
  sentAt: number;
  doneAt: number;
}

export async function hit(
  base: string,
  path: string,
  key: string | null,
  signal?: AbortSignal,
): Promise<Answer> {
  const sentAt = Date.now();
  const r = await fetch(base + path, { headers: key ? { "x-api-key": key } : {}, signal });
  const text = await r.text();
  return { status: r.status, text, headers: r.headers, sentAt, doneAt: Date.now() };
}

export function json(a: Answer): unknown {
  try {
    return JSON.parse(a.text);
  } catch {
    return undefined;
  }
}

/** "200×50, 429 quota_exhausted×950": statuses (and error codes) with their counts. */
export function tally(answers: Answer[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const a of answers) {
    const code = a.status === 200
      ? ""
      : ` ${(json(a) as { error?: { code?: string } })?.error?.code ?? ""}`.trimEnd();
    const k = `${a.status}${code}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return m;
}

export function tallyText(m: Map<string, number>): string {
  return [...m].sort().map(([k, n]) => `${k}×${n}`).join(", ");
}

export async function tempKv(): Promise<string> {
  return await Deno.makeTempFile({ suffix: ".kv" });
}
