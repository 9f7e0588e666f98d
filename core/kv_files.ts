/**
 * A KV file on disk is several files: SQLite keeps a write-ahead log and a shared-memory index
 * next to the store while it is open, and leaves them behind when the process ends without
 * closing it (and a copy made with SQLite's backup API has a rollback journal while it is
 * written). A temporary store removed by its path alone leaks megabytes of log per run.
 */
export function kvFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
}

/** Removes a KV file and its side files; those already gone are no error. */
export async function removeKvFiles(path: string): Promise<void> {
  for (const p of kvFiles(path)) await Deno.remove(p).catch(() => {});
}

/** As removeKvFiles, for an unload handler, which cannot wait. */
export function removeKvFilesSync(path: string): void {
  for (const p of kvFiles(path)) {
    try {
      Deno.removeSync(p);
    } catch {
      // already gone
    }
  }
}
