/**
 * A real store's backup as lines to edit, for the tests of restore's checks: each test changes a
 * line or two of a file a real backup wrote and restores it.
 */
import assert from "node:assert/strict";
import { backup } from "../cli/backup.ts";
import { Accounts } from "../metering/accounts.ts";
import { builtinPlans } from "../metering/plans.ts";
import { systemClock } from "../metering/clock.ts";

export type Line = { key: Record<string, unknown>[]; value: { t: string; v: unknown } };
export type Real = { accountId: string; keyId: string; revokedId: string; lines: Line[] };

/** A real store's backup: one account of `email`, an active key and a revoked one. */
export async function realBackup(dir: string, email: string): Promise<Real> {
  const kv = await Deno.openKv(`${dir}/source.kv`);
  try {
    const accounts = new Accounts(kv, builtinPlans(), systemClock);
    const account = await accounts.create(email, "starter");
    const { key } = await accounts.createKey(account.id);
    const { key: revoked } = await accounts.createKey(account.id);
    await accounts.revokeKey(revoked.id);
    await backup(kv, `${dir}/backup.jsonl`);
    const [, ...lines] = (await Deno.readTextFile(`${dir}/backup.jsonl`)).trimEnd().split("\n");
    return {
      accountId: account.id,
      keyId: key.id,
      revokedId: revoked.id,
      lines: lines.map((l) => JSON.parse(l) as Line),
    };
  } finally {
    kv.close();
  }
}

/** The index of the line whose key starts with `prefix` and has `id` as one of its parts. */
export function lineOf(lines: Line[], prefix: string, id?: string): number {
  const at = lines.findIndex((l) =>
    l.key[0].s === prefix && (id === undefined || l.key.some((p) => p.s === id))
  );
  assert.ok(at >= 0, `a ${prefix} line for ${id}`);
  return at;
}

/** The `key_hash` line that leads to key `keyId`. */
export function digestLineOf(lines: Line[], keyId: string): number {
  const at = lines.findIndex((l) =>
    l.key[0].s === "key_hash" && (l.value.v as { key_id: string }).key_id === keyId
  );
  assert.ok(at >= 0, `a key_hash line for ${keyId}`);
  return at;
}

/** In place of a line, so that the header's count still holds: an entry nothing reads. */
export const filler = (n: number): Line => ({
  key: [{ s: "junk" }, { n }],
  value: { t: "json", v: n },
});

/** Runs `test` in a new temporary folder, removed afterwards. */
export async function inDir(test: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await test(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
