/**
 * SPEC.md's two error bodies: a 422 is `{detail:[{loc:["query",name],msg,type,input}]}`, every
 * other error `{error:{code,message,status}}` with `status` equal to the HTTP status.
 * Returns what is wrong, or null, so that a load test can count shape failures.
 */
export function errorShapeProblem(status: number, body: unknown): string | null {
  if (!body || typeof body !== "object" || Array.isArray(body)) return "body is not a JSON object";
  const b = body as Record<string, unknown>;
  if (status === 422) {
    if (Object.keys(b).join() !== "detail" || !Array.isArray(b.detail) || b.detail.length === 0) {
      return "a 422 body must be exactly {detail:[…]} with at least one entry";
    }
    for (const d of b.detail as Record<string, unknown>[]) {
      if (!d || typeof d !== "object") return "a detail entry is not an object";
      const loc = d.loc as unknown[];
      if (
        !Array.isArray(loc) || loc.length !== 2 || loc[0] !== "query" || typeof loc[1] !== "string"
      ) {
        return `loc must be ["query", name]: ${JSON.stringify(d.loc)}`;
      }
      if (typeof d.msg !== "string" || !d.msg) return "msg must be a non-empty string";
      if (typeof d.type !== "string" || !d.type) return "type must be a non-empty string";
      if (!("input" in d)) return "input is missing";
      if (d.type === "missing" && (d.msg !== "Field required" || d.input !== null)) {
        return "a missing parameter must say 'Field required' with input null";
      }
    }
    return null;
  }
  if (Object.keys(b).join() !== "error") {
    return `body must be exactly {error:{…}}: ${JSON.stringify(b).slice(0, 200)}`;
  }
  const e = b.error as Record<string, unknown>;
  if (!e || typeof e !== "object") return "error is not an object";
  if (typeof e.code !== "string" || !/^[a-z_]+$/.test(e.code)) {
    return `code must be a snake_case string: ${e.code}`;
  }
  if (typeof e.message !== "string" || !e.message) return "message must be a non-empty string";
  if (e.status !== status) return `error.status ${e.status} differs from the HTTP status ${status}`;
  return null;
}
