/**
 * /metrics under the permissions `deno task start` gives (deno.json): Deno reads /proc/self only
 * with --allow-all, so `process_open_fds` cannot be read there. It is left out rather than read
 * as 0 open descriptors (probe AB), and is there, counted, under --allow-all.
 */
import assert from "node:assert/strict";

const SCRIPT = new URL("./proof/metrics_text.ts", import.meta.url).pathname;

function startPermissions(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url)));
  return String(config.tasks.start).split(/\s+/).filter((a) => a.startsWith("--allow-"));
}

async function metricsText(permissions: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, SCRIPT],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("process_open_fds: left out under the start task's permissions, counted under --allow-all", async () => {
  const permissions = startPermissions();
  assert.ok(permissions.includes("--allow-read"), `start runs with ${permissions.join(" ")}`);
  const started = await metricsText(permissions);
  assert.match(started, /^process_resident_memory_bytes [1-9]\d*$/m);
  assert.doesNotMatch(started, /process_open_fds/);
  const all = await metricsText(["--allow-all"]);
  assert.match(all, /^process_open_fds [1-9]\d*$/m);
});
