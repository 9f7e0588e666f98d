/**
 * What reading one page may cost. A reader that takes the text of every match of a selector
 * re-reads a nested match's text at every level: a page of 8 MiB with 120 nested spans in its
 * result banner, or 62 nested lists in its feature bullets, cost 36–75 s and 2–3 GB to parse,
 * held a page worker for a minute after its timeout (a terminated worker's thread runs on to the
 * end of the parse) and froze the whole server with PARSE_WORKERS=0 (probe AT). The answer's own
 * bound (control_chars.ts) comes only after that work.
 *
 * So the text readers (dom.ts `text`, page_text.ts `visibleText`) and the tag walk (`allWhere`)
 * spend from a budget that upstream/page_read.ts opens around one page: characters of text read,
 * and a deadline. Past either, the reading throws PageTooCostly, an uncharged 502 like any page
 * Shelf cannot read. Outside `withinBudget` (tests, `deno task parse`) nothing is counted.
 */

/** The page cost more to read than a page may. */
export class PageTooCostly extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PageTooCostly";
  }
}

interface Budget {
  chars: number;
  readonly charLimit: number;
  readonly deadline: number;
  readonly ms: number;
}

let current: Budget | null = null;

/** Runs `read` with at most `chars` characters of text read and `ms` milliseconds to read them. */
export function withinBudget<T>(limits: { chars: number; ms: number }, read: () => T): T {
  const outer = current;
  current = {
    chars: limits.chars,
    charLimit: limits.chars,
    deadline: performance.now() + limits.ms,
    ms: limits.ms,
  };
  try {
    return read();
  } finally {
    current = outer;
  }
}

/** Counts the text about to be read (`parts`, joined); throws PageTooCostly past the budget. */
export function spendText(parts: readonly string[]): void {
  if (!current) return;
  for (const p of parts) current.chars -= p.length;
  if (current.chars < 0) {
    throw new PageTooCostly(
      `Reading the page took more than ${current.charLimit} characters of text.`,
    );
  }
  checkTime();
}

/** Throws PageTooCostly once the budget's deadline has passed. */
export function checkTime(): void {
  if (current && performance.now() > current.deadline) {
    throw new PageTooCostly(`Reading the page took longer than ${current.ms} ms.`);
  }
}
