/**
 * A KV file on disk is several files: SQLite keeps a write-ahead log and a shared-memory index
 * next to the store while it is open, and leaves them behind when the process ends without
 * closing it (and a copy made with SQLite's backup API has a rollback journal while it is
 * written), and processes that shared it leave the file they took turns on. A temporary store
 * removed by its path alone leaks megabytes of log per run.
 */
export function kvFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, commitLockFile(path)];
}

/**
 * Whether `file` is the store `kvFile` or one of its side files, through symbolic links and
 * relative paths: writing into one (a backup, a recording) corrupts the store or is lost.
 */
export function isStoreFile(file: string, kvFile: string): boolean {
  const store = kvFiles(resolved(kvFile));
  if (store.includes(resolved(file))) return true;
  // A hard link has a path of its own: the same file is the same device and inode (probe CR),
  // where the system reports inodes.
  const id = fileIdentity(file);
  return id !== null && !id.endsWith(":null") && store.some((f) => fileIdentity(f) === id);
}

/** The file's device and inode ("dev:null" where the system reports none), or null where it is gone. */
export function fileIdentity(path: string): string | null {
  try {
    const s = Deno.statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return null;
  }
}

/** The absolute path `file` names, through symbolic links where they exist. */
function resolved(file: string): string {
  const abs = file.startsWith("/") ? file : `${Deno.cwd()}/${file}`;
  try {
    return Deno.realPathSync(abs);
  } catch {
    const slash = abs.lastIndexOf("/");
    let dir = abs.slice(0, slash);
    try {
      dir = Deno.realPathSync(dir || "/");
    } catch { /* a directory not made yet */ }
    return `${dir}/${abs.slice(slash + 1)}`;
  }
}

/** The file processes sharing the store take turns on to commit (core/commit_turns.ts). */
export function commitLockFile(path: string): string {
  return `${path}-turns`;
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

/** Whether anything is at `path`, a dangling symbolic link included (lstat, not stat). */
export function pathExists(path: string): Promise<boolean> {
  return Deno.lstat(path).then(() => true, () => false);
}

/** The folder part of a store file's path, with its final "/"; "" for a bare file name. */
export function folderOf(file: string): string {
  return file.replace(/[^/]*$/, "");
}
