/**
 * A process that charges one account as Shelf's meter does, one decision at a time, as fast as it
 * can: `deno run -A transact_hammer.ts KV_PATH ACCOUNT START SECONDS`, from the epoch millisecond
 * START. Prints one JSON line: decisions committed, and those refused for contention (503 busy).
 */
import { openStore } from "../../config.ts";
import { TooMuchContention, transact } from "../../metering/transact.ts";
import type { AccountState } from "../../metering/account_state.ts";

const [path, account, startAt, seconds] = Deno.args;
const kv = await openStore(path);
await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
const end = Number(startAt) + Number(seconds) * 1000;
const counts = { committed: 0, busy: 0 };
while (Date.now() < end) {
  try {
    await transact(kv, account, null, (s: AccountState | null) => {
      s!.used++;
      return { next: s, result: true };
    });
    counts.committed++;
  } catch (e) {
    if (!(e instanceof TooMuchContention)) throw e;
    counts.busy++;
  }
}
console.log(JSON.stringify(counts));
kv.close();
