/**
 * The one error type of the service and the one place that renders SPEC.md's error body
 * `{ "error": { "code", "message", "status" } }`. Headers ride along (Retry-After, credits).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export const UNAUTHORIZED_MESSAGE =
  "A valid API key is required: send it in the x-api-key header or as Authorization: Bearer <key>.";

export function errorResponse(err: ApiError): Response {
  const body = { error: { code: err.code, message: err.message, status: err.status } };
  return Response.json(body, { status: err.status, headers: err.headers });
}

export function jsonResponse(
  body: unknown,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  return Response.json(body, { status, headers });
}
