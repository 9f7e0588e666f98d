/**
 * Processes on one KV file: a checked commit that another process's write overtakes is refused
 * at once by SQLite ("database is locked"), and the meter takes 16 refusals in a row for a store
 * that refuses writes (503). Once they have met, processes take turns to commit
 * (core/commit_turns.ts) and lose no commit that way.
 */
import assert from "node:assert/strict";
import { tempKv } from "./proof/http.ts";
import { commitLockFile, removeKvFiles } from "../core/kv_files.ts";
import { KV } from "../metering/kv_layout.ts";
import { CommitTurns } from "../core/commit_turns.ts";

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

const HAMMER = new URL("./proof/commit_hammer.ts", import.meta.url).pathname;
const HOLDER = new URL("./proof/turns_holder.ts", import.meta.url).pathname;
const TRANSACTS = new URL("./proof/transact_hammer.ts", import.meta.url).pathname;

/** Runs one of tests/proof's store processes to its end; the JSON line it printed. */
async function runProcess<T>(script: string, ...args: (string | number)[]): Promise<T> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", script, ...args.map(String)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(out.success, `${script} ends well`);
  return JSON.parse(new TextDecoder().decode(out.stdout).trim()) as T;
}

interface Hammered {
  landed: number;
  conflicts: number;
  threw: number;
  threwAt: number[];
  perSecond: (number | null)[];
}

type Mode = "plain" | number;

function hammer(kvPath: string, start: number, seconds: number, mode?: Mode): Promise<Hammered> {
  return runProcess(HAMMER, kvPath, start, seconds, ...(mode === undefined ? [] : [mode]));
}

/**
 * A commit's wait for the turn, longer than any run here. Past LOCK_WAIT_MS a commit goes ahead
 * unlocked and may be refused, which on a disk kept busy by other writers is most commits (each
 * fsync outlasts the wait), with turns or without: a fixed bound on refusals failed in CI that
 * way (25% of tries). With this wait none runs out, and what is measured is the turns alone; the
 * wait running out has its own test below.
 */
const NO_WAIT_RUNS_OUT = 60_000;

/** Commits a process may have in flight unlocked when it first meets the others: its workers. */
const IN_FLIGHT = 32;

/**
 * Hammers `paths` (one process each) with turns and, at the same time, as many processes on a
 * file of their own without turns, which shows the commits contend on this machine now.
 */
async function beside(paths: string[], seconds: number) {
  const dir = await Deno.makeTempDir();
  try {
    const plainPath = `${dir}/plain.kv`;
    (await Deno.openKv(plainPath)).close();
    const start = Date.now() + 3000; // after all have started and opened their store
    const [turns, plain] = await Promise.all([
      Promise.all(paths.map((path) => hammer(path, start, seconds, NO_WAIT_RUNS_OUT))),
      Promise.all(paths.map(() => hammer(plainPath, start, seconds, "plain"))),
    ]);
    const brief = (rs: Hammered[]) =>
      rs.map(({ landed, conflicts, threw }) => ({ landed, conflicts, threw }));
    console.log({ turns: brief(turns), plain: brief(plain) });
    return { turns, plain };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * beside(), measured again (up to three runs) while some process has not met the others: the
 * bound below is about processes that all take turns, and on a busy machine one started late was
 * seen never to be refused in the whole run (CI, once), which leaves nothing to measure.
 */
async function besideUntilMet(paths: string[], seconds: number) {
  for (let run = 1;; run++) {
    const results = await beside(paths, seconds);
    if (run === 3 || results.turns.every((r) => r.threwAt.length > 0)) return results;
    console.log(`run ${run}: a process never met the others; measured again`);
  }
}

/**
 * Refusals once every process has met the others (its first refusal). From then on each process
 * commits one at a time under the lock; only commits that were in flight unlocked when their
 * process met may still be refused (IN_FLIGHT a process), and each of those that lands may refuse
 * the one locked commit of each other process: IN_FLIGHT × processes² at most. Processes beside
 * them without turns, counted from the same moment, are refused far more often. Measured here:
 * 1 to 60 against 7,559 to 10,043 on a quiet disk, 0 to 29 against 1,170 to 2,187 with six
 * `dd conv=fsync` loops writing beside them.
 */
function fewLateRefusals({ turns, plain }: { turns: Hammered[]; plain: Hammered[] }): void {
  const met = Math.max(...turns.map((r) => r.threwAt[0] ?? Infinity));
  assert.ok(met < Infinity, "each process meets the others");
  const after = (rs: Hammered[]) =>
    rs.reduce((n, r) => n + r.threwAt.filter((t) => t > met).length, 0);
  console.log(`refused once all had met: ${after(turns)} with turns, ${after(plain)} without`);
  const bound = IN_FLIGHT * turns.length ** 2;
  assert.ok(
    after(turns) <= bound && after(turns) * 4 < after(plain),
    `refusals once all had met: ${after(turns)} with turns, ${after(plain)} without`,
  );
}

Deno.test("three processes committing checked writes to one KV file: refusals are rare once they have met", async () => {
  const kvPath = await tempKv();
  try {
    const results = await besideUntilMet([kvPath, kvPath, kvPath], 4);
    for (const r of results.turns) {
      assert.ok(r.landed > 0, `each process lands commits: ${JSON.stringify(r)}`);
    }
    fewLateRefusals(results);
    const lock = await Deno.stat(commitLockFile(kvPath));
    assert.equal(lock.mode! & 0o077, 0, "the turns file is the owner's alone");
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("a process that holds the turn and stops costs the others one wait, not one per commit", async () => {
  const kvPath = await tempKv();
  try {
    const start = Date.now() + 3000;
    // Two processes meet in their first second; from 1.5 s to 7.5 s a third holds the turn, as a
    // process stopped while holding it would (SIGSTOP, docker pause). Each of the two then waits
    // LOCK_WAIT_MS once, and commits without turns until its request is answered.
    const holder = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", HOLDER, kvPath, String(start + 1500), "6000"],
    }).output();
    const results = await Promise.all([1, 2].map(() => hammer(kvPath, start, 8)));
    assert.ok((await holder).success);
    console.log(results.map((r) => r.perSecond));
    for (const r of results) {
      // Seconds 4 to 6 lie inside the hold. Waiting for the lock at every commit (2 s each, as
      // first built), a process landed none in them.
      const held = [4, 5, 6].reduce((n, s) => n + (r.perSecond[s] ?? 0), 0);
      assert.ok(held >= 30, `commits landed in seconds 4-6 of the hold: ${r.perSecond}`);
    }
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("processes that reach one KV file through a symlink take turns on the same file", async () => {
  const dir = await Deno.makeTempDir();
  const real = `${dir}/shelf.kv`;
  const link = `${dir}/link.kv`;
  try {
    (await Deno.openKv(real)).close();
    await Deno.symlink(real, link);
    const results = await besideUntilMet([real, link], 4);
    // Spelled as given, the two took turns on two files (link.kv-turns beside shelf.kv-turns),
    // and about one try in twelve was refused after the first second.
    assert.ok(await exists(commitLockFile(real)), "the real path's turns file");
    assert.equal(await exists(commitLockFile(link)), false, "no turns file of the link's own");
    fewLateRefusals(results);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("one account charged from three processes: no decision is refused for contention, and every one counts", async () => {
  const kvPath = await tempKv();
  try {
    const account = "acc_turns";
    const kv = await Deno.openKv(kvPath);
    await kv.set(KV.account(account), { id: account, used: 0, recent_batches: [] });
    kv.close();
    const start = Date.now() + 3000;
    const results = await Promise.all(
      [1, 2, 3].map(() =>
        runProcess<{ committed: number; busy: number }>(TRANSACTS, kvPath, account, start, 6)
      ),
    );
    console.log(results);
    // Reading outside the turn and committing in it, a process lost 64 tries in a row to the
    // others' commits now and then: 0.07% of one account's calls over three processes were 503
    // `busy` (probe AE).
    assert.deepEqual(results.map((r) => r.busy), [0, 0, 0]);
    const check = await Deno.openKv(kvPath);
    const used = (await check.get<{ used: number }>(KV.account(account))).value!.used;
    check.close();
    assert.equal(used, results.reduce((n, r) => n + r.committed, 0), "every decision counted once");
  } finally {
    await removeKvFiles(kvPath);
  }
});

Deno.test("a turns file that cannot be opened is reported once, and commits go on unlocked", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A directory where the lock file should be: opening it for writing fails.
    const lockPath = `${dir}/store.kv-turns`;
    await Deno.mkdir(lockPath);
    const heard: unknown[] = [];
    const turns = new CommitTurns(lockPath, (e) => heard.push(e));
    const locked = () => Promise.reject(new Error("database is locked"));
    await assert.rejects(turns.commit(locked), /database is locked/);
    await assert.rejects(turns.commit(locked), /database is locked/);
    assert.equal(heard.length, 1, "told once");
    assert.equal(await turns.commit(() => Promise.resolve(7)), 7);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
