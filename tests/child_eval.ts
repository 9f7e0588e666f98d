/**
 * Code run in a child process that is killed after `ms`: for code that, without its fix, holds
 * its thread for good (timers and all), so a test in the same process would never end.
 */
export async function evalKilledAfter(
  code: string,
  ms = 20_000,
): Promise<{ stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", code],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), ms);
  const out = await child.output();
  clearTimeout(timer);
  const text = new TextDecoder();
  return { stdout: text.decode(out.stdout).trim(), stderr: text.decode(out.stderr) };
}
