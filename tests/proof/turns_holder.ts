/**
 * A process that takes the commit turn and keeps it, as one stopped while holding it would:
 * `deno run -A turns_holder.ts KV_PATH AT HOLD_MS` takes the flock of the store's turns file at
 * the epoch millisecond AT and hands it back HOLD_MS later.
 */
import { commitLockFile } from "../../core/kv_files.ts";

const [path, at, holdMs] = Deno.args;
const file = await Deno.open(commitLockFile(path), { read: true, write: true, create: true });
await new Promise((r) => setTimeout(r, Math.max(0, Number(at) - Date.now())));
await file.lock(true);
await new Promise((r) => setTimeout(r, Number(holdMs)));
await file.unlock();
file.close();
