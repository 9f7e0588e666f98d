/**
 * A restore writes its entries in many commits. Stopped between two (a SIGKILL, a power cut, a
 * full disk), it leaves a store holding some keys and not others, some of which work and cannot
 * be revoked (probe HE). The restore marks the store before its first commit and clears the mark
 * after its last, so that such a store is refused, by the server at start-up and by every admin
 * command, with what to do, instead of being served.
 */
import { KV } from "./kv_layout.ts";
import { whileLocked } from "../core/lock_backoff.ts";

interface Mark {
  file: string;
  entries: number;
  started_at: string;
}

/** Marks an empty store as being restored; false if it was not empty of a mark. */
export async function markRestoreStarted(
  kv: Deno.Kv,
  file: string,
  entries: number,
  now: number,
): Promise<boolean> {
  const mark: Mark = { file, entries, started_at: new Date(now).toISOString() };
  // Processes sharing the file take turns with its write lock (core/lock_backoff.ts).
  const done = await whileLocked(() =>
    kv.atomic().check({ key: KV.restoreUnfinished, versionstamp: null })
      .set(KV.restoreUnfinished, mark).commit()
  );
  if (done.ok) return true;
  // A commit that threw may have landed all the same (a remote store's lost reply).
  const held = await kv.get(KV.restoreUnfinished);
  return JSON.stringify(held.value) === JSON.stringify(mark);
}

export async function markRestoreFinished(kv: Deno.Kv): Promise<void> {
  await whileLocked(() => kv.delete(KV.restoreUnfinished));
}

/** Why the store must not be used, or null when no restore into it was left unfinished. */
export async function unfinishedRestore(kv: Deno.Kv): Promise<string | null> {
  const { value, versionstamp } = await kv.get<Partial<Mark>>(KV.restoreUnfinished);
  if (versionstamp === null) return null; // a mark holding null is a mark all the same
  // Whoever can write the store wrote these: shown only as the restore writes them, and bounded.
  const file = typeof value?.file === "string" && value.file.length <= 1_024 ? value.file : null;
  const from = file === null ? "" : ` of ${JSON.stringify(file)}`;
  const started = typeof value?.started_at === "string" ? Date.parse(value.started_at) : NaN;
  const at = Number.isFinite(started) ? ` started ${new Date(started).toISOString()}` : "";
  return `it holds a restore${from}${at} that did not finish: some entries are missing; ` +
    "delete it (a local file with its -wal and -shm files; a denokv server's database; on Deno " +
    "Deploy, use a new KV database) and restore again";
}
