import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { bytesHex, sha256Hex } from "../metering/sha256.ts";

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

Deno.test("bytesHex() writes every byte value as two lowercase hex digits", () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.equal(bytesHex(all), Buffer.from(all).toString("hex"));
  assert.equal(bytesHex(new Uint8Array()), "");
});
