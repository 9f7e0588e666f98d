/** `deno task parse` run as an operator runs it, for the tests of cli/parse.ts. */

const ROOT = new URL("../", import.meta.url);

/** `deno task parse` with exactly these arguments. */
export async function parseTask(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "parse", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/** `deno task parse` of a file holding `bytes`, named with `suffix`, after `flags`. */
export async function parseBytes(bytes: Uint8Array, suffix: string, ...flags: string[]) {
  const file = await Deno.makeTempFile({ suffix });
  try {
    await Deno.writeFile(file, bytes);
    return await parseTask(...flags, file);
  } finally {
    await Deno.remove(file);
  }
}
