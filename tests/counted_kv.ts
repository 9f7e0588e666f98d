/**
 * A real KV file whose commits are counted: a proxy over the store, for tests of how much store
 * work a burst costs (every call goes to the real store).
 */
import { removeKvFiles } from "../core/kv_files.ts";

export async function countedKv() {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const real = await Deno.openKv(path);
  let commits = 0;
  const kv = new Proxy(real, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => (commits++, commit());
          return op;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return {
    kv,
    commits: () => commits,
    async [Symbol.asyncDispose]() {
      real.close();
      await removeKvFiles(path);
    },
  };
}
