/**
 * Dashboard passwords: scrypt (node:crypto) with a 16-byte random salt per password, stored
 * under KV.credential apart from the account record. Verification runs in constant time and
 * spends the same work on an unknown account as on a known one.
 */
import { scrypt, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import { KV } from "./kv_layout.ts";
import { randomHex } from "./api_key.ts";
import { KeyedLimiter, LimiterFull } from "../core/limiter.ts";
import { type Client, NO_CLIENT } from "./window_slots.ts";

export interface Credential {
  algo: "scrypt";
  /** scrypt cost parameters, stored so that they can be raised for new passwords later. */
  N: number;
  r: number;
  p: number;
  salt: string;
  hash: string;
  updated_at: number;
  /**
   * Bumped by every password change or reset; a session made under another epoch is over, so
   * changing the password signs every other browser out.
   */
  epoch?: number;
}

const PARAMS = { N: 16384, r: 8, p: 1 };
const KEY_LEN = 32;
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;

// scrypt takes ~50 ms and 16 MiB a call: a flood of sign-ins must neither fill the thread pool
// that KV and the network also use, nor queue without end (issue 13.5). Waiting work is served
// one client network at a time in turn, each with at most a few waiting: a first-come queue let
// one /48's flood answer everyone else's sign-ins with 503.
const SCRYPT_AT_ONCE = 2;
const SCRYPT_QUEUE = 256;
const SCRYPT_WAITING_PER_CLIENT = 16;
// Past SCRYPT_QUEUE only a network with nothing waiting still gets in line (17 networks of 16
// filled it for everyone else); this bounds the queue all the same.
const SCRYPT_QUEUE_MAX = 4 * SCRYPT_QUEUE;
const scryptSlots = new KeyedLimiter(SCRYPT_AT_ONCE, SCRYPT_WAITING_PER_CLIENT);
let scryptQueued = 0;

/** More password checks are waiting than the queue holds; the caller answers 503. */
export class PasswordWorkBusy extends Error {
  constructor() {
    super("Too many sign-ins at once; try again in a moment.");
    this.name = "PasswordWorkBusy";
  }
}

async function derive(
  password: string,
  salt: string,
  c: { N: number; r: number; p: number },
  client: Client,
): Promise<Buffer> {
  // The turn is the client's network: its /48 for IPv6, else its address.
  const turn = client.network ?? client.address ?? "";
  const full = scryptQueued >= SCRYPT_QUEUE && scryptSlots.waitingOf("scrypt", turn) > 0;
  if (full || scryptQueued >= SCRYPT_QUEUE_MAX) throw new PasswordWorkBusy();
  scryptQueued++;
  try {
    return await scryptSlots.run("scrypt", () => deriveNow(password, salt, c), { owner: turn });
  } catch (e) {
    throw e instanceof LimiterFull ? new PasswordWorkBusy() : e;
  } finally {
    scryptQueued--;
  }
}

function deriveNow(
  password: string,
  salt: string,
  c: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), Buffer.from(salt, "hex"), KEY_LEN, {
      ...c,
      maxmem: 64 * 1024 * 1024,
    }, (err, key) => err ? reject(err) : resolve(key))
  );
}

/**
 * A new credential; `previous` is the one it replaces, whose sessions it ends. `client` is the
 * request's, whose network's turn the work waits in (see derive). Even the first one
 * takes a new epoch: reset links asked for before an account had a password carry epoch 0, and
 * setting that first password must void them too.
 */
export async function hashPassword(
  password: string,
  now: number,
  previous?: Credential | null,
  client: Client = NO_CLIENT,
): Promise<Credential> {
  const salt = randomHex(16);
  const key = await derive(password, salt, PARAMS, client);
  const epoch = (previous?.epoch ?? 0) + 1;
  return { algo: "scrypt", ...PARAMS, salt, hash: key.toString("hex"), updated_at: now, epoch };
}

/** True when `password` matches; with no credential it still derives once, then answers false. */
export async function verifyPassword(
  password: string,
  cred: Credential | null,
  client: Client = NO_CLIENT,
): Promise<boolean> {
  const c = cred ?? { ...PARAMS, salt: "00".repeat(16), hash: "00".repeat(KEY_LEN) };
  const key = await derive(password, c.salt, c, client);
  const expected = Buffer.from(c.hash, "hex");
  return key.length === expected.length && timingSafeEqual(key, expected) && cred !== null;
}

export async function readCredential(kv: Deno.Kv, accountId: string): Promise<Credential | null> {
  return (await kv.get<Credential>(KV.credential(accountId))).value;
}

/** A reason the password is unacceptable, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD) {
    return `The password needs at least ${MIN_PASSWORD} characters.`;
  }
  if (password.length > MAX_PASSWORD) {
    return `The password may have at most ${MAX_PASSWORD} characters.`;
  }
  return null;
}
