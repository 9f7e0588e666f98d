/**
 * Reads a file's bytes up to one past `max`, so that a file larger than the caller allows (or one
 * that never ends, such as /dev/zero) is refused without being read whole.
 */
export function readAtMostSync(f: Deno.FsFile, max: number): Uint8Array | null {
  const buf = new Uint8Array(max + 1);
  let n = 0;
  while (n < buf.length) {
    const got = f.readSync(buf.subarray(n));
    if (got === null) break;
    n += got;
  }
  return n > max ? null : buf.subarray(0, n);
}
