import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Buffer } from "node:buffer";
import { bytesHex, sha256Hex } from "../metering/sha256.ts";

const reference = (s: string) => createHash("sha256").update(s).digest("hex");

Deno.test("sha256Hex() gives the standard test vectors", () => {
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(
    sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

Deno.test("sha256Hex() agrees with node:crypto at every padding boundary and on non-ASCII text", () => {
  const alphabet = "ab0_ é€😀\u0000\u007f\u0080";
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let length = 0; length <= 300; length++) {
    const ascii = "x".repeat(length);
    assert.equal(sha256Hex(ascii), reference(ascii), `ascii length ${length}`);
    let mixed = "";
    for (let i = 0; i < length; i++) mixed += alphabet[Math.floor(random() * alphabet.length)];
    assert.equal(sha256Hex(mixed), reference(mixed), JSON.stringify(mixed));
  }
  const long = "shelf_live_".repeat(10_000) + "é";
  assert.equal(sha256Hex(long), reference(long));
  // The reused buffer holds 4096 units of three UTF-8 bytes each; one more takes another road.
  for (const units of [4095, 4096, 4097]) {
    const wide = "€".repeat(units);
    assert.equal(sha256Hex(wide), reference(wide), `${units} three-byte units`);
  }
  // A long input takes a buffer of its own; a short one after it must not see leftovers.
  assert.equal(sha256Hex("abc"), reference("abc"));
});

Deno.test("bytesHex() writes every byte value as two lowercase hex digits", () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.equal(bytesHex(all), Buffer.from(all).toString("hex"));
  assert.equal(bytesHex(new Uint8Array()), "");
});
