/**
 * Processes sharing one KV file (INTERFACE.md's several-processes deployment) lose checked
 * commits to each other. A commit that reads before it writes (a versionstamp check, a `sum`)
 * runs in an SQLite transaction that starts as a reader; when another process has written since
 * it started, SQLite refuses the upgrade at once ("database is locked") without waiting for the
 * lock. Two processes committing checked writes back to back lost 93% of their commits that way
 * here, and a commit that lost 16 times in a row (lock_backoff.ts) answered a healthy call 503.
 *
 * So a process that has seen that refusal once takes turns for every later commit: one commit
 * at a time in the process, each under an exclusive flock of a file beside the store, which the
 * other processes take the same way. The same two processes then lost none. A process alone on
 * its file never sees the refusal and never pays for the lock. A holder that stops mid-commit
 * (a stopped process keeps its flock) delays one commit of each other process by LOCK_WAIT_MS:
 * past it, and until that process's request for the lock is answered, its commits go ahead
 * unlocked, as before, and a refusal is retried by its caller. A process stopped inside SQLite's
 * own write transaction keeps SQLite's lock, which turns cannot go around: every other process's
 * writes are refused until it resumes (probe AV; README, "Several instances on one KV").
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { KeyTurns } from "./key_turns.ts";

/**
 * How long a commit waits for the turn. Short: flock hands the lock to no one in order, and a
 * busy process may take it again and again while another waits. At 2 s, a 1% tail of the other
 * process's paid calls waited it out (p99 1,999 ms), at 250 ms 227–239 ms; at 50 ms, 29–33 ms
 * against 26 without turns (probe AE's stop_many.ts baseline, one busy process and one light).
 */
export const LOCK_WAIT_MS = 50;

/** The turns whose hold() the running code is inside: its commits are already in that turn. */
const holding = new AsyncLocalStorage<CommitTurns>();

/** The turns `kv`'s commits take (openStore's local files), if any. */
const turnsOfKv = new WeakMap<Deno.Kv, CommitTurns>();
export function turnsOf(kv: Deno.Kv): CommitTurns | undefined {
  return turnsOfKv.get(kv);
}

/** The message SQLite's refusal reaches JavaScript with. */
export function isLockedError(e: unknown): boolean {
  return e instanceof Error && e.message.includes("database is locked");
}

export class CommitTurns {
  readonly #lockPath: string;
  #file: Deno.FsFile | null = null;
  #shared = false;
  /** This process's commits, one at a time (a flock is the open file's, not a caller's). */
  readonly #queue = new KeyTurns();
  #unanswered: Promise<void> | null = null;

  /**
   * `unavailable` hears why the lock file could not be opened: commits then go on unlocked.
   * `waitMs` is how long a commit waits for the turn (tests lengthen it to see turns alone).
   */
  constructor(
    lockPath: string,
    private readonly unavailable: (e: unknown) => void = () => {},
    private readonly waitMs = LOCK_WAIT_MS,
  ) {
    this.#lockPath = lockPath;
  }

  async commit<T>(commit: () => Promise<T>): Promise<T> {
    if (holding.getStore() === this) return await commit();
    if (!this.#shared) {
      try {
        return await commit();
      } catch (e) {
        if (isLockedError(e)) await this.#share();
        throw e;
      }
    }
    return await this.#queue.run("", () => this.#locked(commit));
  }

  /**
   * Runs `work` (reads, then a commit) in one turn, so that no other process's commit lands
   * between its read and its commit. Waiting for the turn between the two, as a plain commit
   * does, the record read was always stale by then when other processes kept writing it: one
   * account's calls spread over three processes lost 64 tries in a row and answered 503 `busy`
   * for 0.07% of calls (probe AE). A process alone on its file just runs `work`.
   */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    if (!this.#shared || holding.getStore() === this) return await work();
    return await this.#queue.run("", () => this.#locked(() => holding.run(this, work)));
  }

  async #locked<T>(commit: () => Promise<T>): Promise<T> {
    const file = this.#file;
    // While a request for the lock is still unanswered, its holder is taken to be stopped: commits
    // go ahead unlocked, as without turns, instead of each waiting out LOCK_WAIT_MS behind it
    // (a stopped holder had every other process commit once per wait).
    if (!file || this.#unanswered) return await commit();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const locking = file.lock(true).then(() => true, () => false);
    const held = await Promise.race([
      locking,
      new Promise<false>((r) => timer = setTimeout(() => r(false), this.waitMs)),
    ]);
    clearTimeout(timer);
    if (!held) {
      // Granted late, the lock is handed back at once; no other request is made meanwhile, so
      // none of this process's commits holds it then (a flock belongs to the open file, and
      // handing back a second grant would drop the first).
      this.#unanswered = locking.then(async (got) => {
        if (got) await file.unlock().catch(() => {});
        this.#unanswered = null;
      });
      return await commit();
    }
    try {
      return await commit();
    } finally {
      await file.unlock().catch(() => {});
    }
  }

  async #share(): Promise<void> {
    if (this.#shared) return;
    this.#shared = true;
    try {
      this.#file = await Deno.open(this.#lockPath, {
        read: true,
        write: true,
        create: true,
        mode: 0o600,
      });
    } catch (e) {
      // A directory the process cannot write: commits go on one at a time, unlocked, and the
      // operator is told, since other processes' commits may then refuse this one's again.
      this.#file = null;
      this.unavailable(e);
    }
  }

  close(): void {
    try {
      this.#file?.close();
    } catch {
      // already closed
    }
    this.#file = null;
  }
}

/**
 * Routes every atomic commit of `kv` through `turns`. Plain `set`s and `delete`s start as writers
 * and wait for the lock in SQLite itself, so only `atomic()` is taken.
 */
export function takeTurns(kv: Deno.Kv, turns: CommitTurns): Deno.Kv {
  turnsOfKv.set(kv, turns);
  const atomic = kv.atomic.bind(kv);
  const close = kv.close.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = () => turns.commit(commit);
    return op;
  };
  kv.close = () => {
    turns.close();
    close();
  };
  return kv;
}
