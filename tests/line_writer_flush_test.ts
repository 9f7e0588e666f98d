/**
 * When the log's LineWriter (core/line_writer.ts) hands lines to its stream: a burst of lines in
 * one turn goes to the stream every 512 lines rather than piling up until the turn ends, and a
 * drop is told as soon as it happens, even when no other line follows it. The stream here keeps
 * what it is given, as stdout would.
 */
import assert from "node:assert/strict";
import { LineWriter, MAX_BACKLOG_BYTES } from "../core/line_writer.ts";

/** A stream that keeps each write's text. */
function keptStream() {
  const writes: string[] = [];
  return {
    writes,
    write(p: Uint8Array): Promise<number> {
      writes.push(new TextDecoder().decode(p));
      return Promise.resolve(p.length);
    },
  };
}

Deno.test("a burst of 512 lines in one turn is handed to the stream at once, before the turn ends", async () => {
  const stream = keptStream();
  const writer = new LineWriter(stream, (n) => `dropped ${n}`);
  const sent = Array.from({ length: 600 }, (_, i) => `line ${i}`);
  // Without this, a loop logging in one turn holds every line in memory, past the backlog bound.
  for (const line of sent.slice(0, 512)) writer.line(line);
  assert.equal(stream.writes.length, 1, "written with no timer run yet");
  assert.equal(stream.writes[0], sent.slice(0, 512).join("\n") + "\n");
  for (const line of sent.slice(512)) writer.line(line);
  await writer.settle(5_000);
  await new Promise((r) => setTimeout(r, 20)); // the turn's own flush, now with nothing to do
  assert.equal(stream.writes.join(""), sent.join("\n") + "\n", "every line once, in order");
});

Deno.test("a lone line over the backlog bound is dropped, and the drop is told without another line to carry it", async () => {
  const stream = keptStream();
  const writer = new LineWriter(stream, (n) => `dropped ${n}`);
  writer.line("x".repeat(MAX_BACKLOG_BYTES + 1));
  await writer.settle(5_000);
  await new Promise((r) => setTimeout(r, 20)); // the turn's own flush, now with nothing to do
  // The operator learns a line was lost now, not whenever the next line happens to come.
  assert.deepEqual(stream.writes, ["dropped 1\n"]);
});
