import type { ErrorCause } from "../protocol";

// Turns anything thrown (JSON-RPC errors included) into a message for people.
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null && "message" in error) {
    const message = (error as { message: unknown }).message;
    if (typeof message === "string") return message;
  }
  return String(error);
}

/** The JSON-RPC error code, if the error carries one. */
export function errorCode(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === "number") return code;
  }
  return undefined;
}

/** The cause the server named in a JSON-RPC error's `data` (server/baton/causes.py). */
export function errorCause(error: unknown): ErrorCause | undefined {
  if (typeof error !== "object" || error === null || !("data" in error)) return undefined;
  const data = (error as { data: unknown }).data;
  if (typeof data !== "object" || data === null || !("cause" in data)) return undefined;
  const cause = (data as { cause: unknown }).cause;
  return typeof cause === "string" ? (cause as ErrorCause) : undefined;
}
