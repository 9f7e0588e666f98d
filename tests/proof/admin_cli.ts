/** `deno task admin` on a KV file: what an operator without the admin API uses. */
export async function adminCli(
  env: Record<string, string>,
  ...args: string[]
): Promise<Record<string, unknown>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: new URL("../../", import.meta.url).pathname,
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(
      `deno task admin ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return JSON.parse(text);
}
