/**
 * A server of one 4 MB paced answer with a short idle time (argument, ms), run as a child process
 * by tests/paced_body_test.ts so that what the runtime writes to stderr can be read. Prints its
 * port.
 */
import { pacedBody } from "../core/paced_body.ts";

const bytes = new Uint8Array(4 * 1024 * 1024).fill(120); // more than the socket buffers hold
const server = Deno.serve(
  { port: 0, hostname: "127.0.0.1", onListen() {} },
  () =>
    new Response(pacedBody(bytes, Number(Deno.args[0])), {
      headers: { "content-length": `${bytes.length}` },
    }),
);
console.log(server.addr.port);
