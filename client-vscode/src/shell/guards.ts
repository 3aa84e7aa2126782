// Small runtime checks for messages crossing the webview boundary. Both sides
// treat whatever arrives as untrusted and drop what does not match.

export type Json = Record<string, unknown>;

export const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const isString = (value: unknown, max = 1_000_000): value is string =>
  typeof value === "string" && value.length <= max;

export const isId = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= 200;

export const isInt = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= 0;

export const isMode = (value: unknown): value is "build" | "plan" => value === "build" || value === "plan";

export function hasType<T extends string>(value: unknown, types: readonly T[]): value is Json & { type: T } {
  return isRecord(value) && typeof value.type === "string" && (types as readonly string[]).includes(value.type);
}
