/**
 * Dashboard passwords: scrypt (node:crypto) with a 16-byte random salt per password, stored
 * under KV.credential apart from the account record. Verification runs in constant time and
 * spends the same work on an unknown account as on a known one.
 */
import { scrypt, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import { KV } from "./kv_layout.ts";
import { randomHex } from "./api_key.ts";

export interface Credential {
  algo: "scrypt";
  /** scrypt cost parameters, stored so that they can be raised for new passwords later. */
  N: number;
  r: number;
  p: number;
  salt: string;
  hash: string;
  updated_at: number;
}

const PARAMS = { N: 16384, r: 8, p: 1 };
const KEY_LEN = 32;
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;

function derive(password: string, salt: string, c: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), Buffer.from(salt, "hex"), KEY_LEN, { ...c, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key))
  );
}

export async function hashPassword(password: string, now: number): Promise<Credential> {
  const salt = randomHex(16);
  const key = await derive(password, salt, PARAMS);
  return { algo: "scrypt", ...PARAMS, salt, hash: key.toString("hex"), updated_at: now };
}

/** True when `password` matches; with no credential it still derives once, then answers false. */
export async function verifyPassword(password: string, cred: Credential | null): Promise<boolean> {
  const c = cred ?? { ...PARAMS, salt: "00".repeat(16), hash: "00".repeat(KEY_LEN) };
  const key = await derive(password, c.salt, c);
  const expected = Buffer.from(c.hash, "hex");
  return key.length === expected.length && timingSafeEqual(key, expected) && cred !== null;
}

export async function readCredential(kv: Deno.Kv, accountId: string): Promise<Credential | null> {
  return (await kv.get<Credential>(KV.credential(accountId))).value;
}

/** A reason the password is unacceptable, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD) return `The password needs at least ${MIN_PASSWORD} characters.`;
  if (password.length > MAX_PASSWORD) return `The password may have at most ${MAX_PASSWORD} characters.`;
  return null;
}
