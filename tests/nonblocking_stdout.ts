/**
 * Runs a command with its stdout set non-blocking (O_NONBLOCK on the open file it shares with this
 * process), as a parent in Node.js or Python may hand one over, and, when stdout is a pipe, that
 * pipe cut to 4 KiB so that a little output fills it: `deno run -A tests/nonblocking_stdout.ts
 * CMD ARGS…`. Nothing in Deno's own API sets either.
 */
const libc = Deno.dlopen("libc.so.6", {
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
});
const F_GETFL = 3;
const F_SETFL = 4;
const F_SETPIPE_SZ = 1031;
const O_NONBLOCK = 0o4000;
libc.symbols.fcntl(1, F_SETFL, libc.symbols.fcntl(1, F_GETFL, 0) | O_NONBLOCK);
libc.symbols.fcntl(1, F_SETPIPE_SZ, 4096);
const [cmd, ...args] = Deno.args;
const status = await new Deno.Command(cmd, { args, stdout: "inherit", stderr: "inherit" }).spawn()
  .status;
Deno.exit(status.code);
