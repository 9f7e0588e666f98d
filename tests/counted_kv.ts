/**
 * Stores whose commits a test watches or scripts: a proxy over a real KV file, every other call
 * going to the real store.
 */
import { removeKvFiles } from "../core/kv_files.ts";

type CommitResult = Deno.KvCommitResult | Deno.KvCommitError;

/**
 * `kv` with each atomic operation's commit made by `commit`, which is handed the real one: to
 * count commits, lose their replies, or refuse them without calling it.
 */
export function withCommits(
  kv: Deno.Kv,
  commit: (real: () => Promise<CommitResult>) => Promise<CommitResult>,
): Deno.Kv {
  return replacing(kv, "atomic", (target) => () => {
    const op = target.atomic();
    const real = op.commit.bind(op);
    op.commit = () => commit(real);
    return op;
  });
}

/** `kv` with `seen` told the selector of each list before the real store runs it. */
export function withLists(kv: Deno.Kv, seen: (selector: Deno.KvListSelector) => void): Deno.Kv {
  return replacing(
    kv,
    "list",
    (target) => (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
      seen(selector);
      return target.list(selector, options);
    },
  );
}

/** `kv` with its member `name` made by `make` from the real store; every other call goes to it. */
export function replacing(
  kv: Deno.Kv,
  name: keyof Deno.Kv,
  make: (real: Deno.Kv) => unknown,
): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === name) return make(target);
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** A real KV file whose commits are counted, for tests of how much store work a burst costs. */
export async function countedKv() {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const real = await Deno.openKv(path);
  let commits = 0;
  const kv = withCommits(real, (commit) => (commits++, commit()));
  return {
    kv,
    commits: () => commits,
    async [Symbol.asyncDispose]() {
      real.close();
      await removeKvFiles(path);
    },
  };
}
