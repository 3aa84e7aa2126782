// Method names and types of the Baton wire contract (docs/protocol.md). The
// types are generated from the server's JSON Schema into protocol.generated.ts;
// this module adds only what the schema cannot express yet.
import type {
  BatonClientNotifications,
  BatonRequests,
  BatonServerNotifications,
  PermissionRequestParams,
  PermissionResponse,
  PromptResult,
} from "./protocol.generated";

export * from "./protocol.generated";

/**
 * Methods the client relies on that the server's schema may not list yet.
 * Each one drops out of this map by itself as soon as the schema has it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AssumedRequests {}

export type Requests = BatonRequests & Omit<AssumedRequests, keyof BatonRequests>;
export type RequestMethod = keyof Requests;
export type ParamsOf<M extends RequestMethod> = Requests[M]["params"];
export type ResultOf<M extends RequestMethod> = Requests[M]["result"];

export type ServerNotificationMethod = keyof BatonServerNotifications;
export type ServerNotificationParams<M extends ServerNotificationMethod> = BatonServerNotifications[M];
export type ClientNotificationMethod = keyof BatonClientNotifications;
export type ClientNotificationParams<M extends ClientNotificationMethod> = BatonClientNotifications[M];

export const PERMISSION_REQUEST = "baton/permission/request";
export type { PermissionRequestParams, PermissionResponse };

export type SessionUpdate = BatonServerNotifications["baton/session/update"]["update"];
export type Mode = "build" | "plan";
/** What a failed turn or request was, as the server classified it (server/baton/causes.py). */
export type ErrorCause = NonNullable<PromptResult["cause"]>;

/** JSON-RPC error codes Baton uses (docs/protocol.md, "Errors"). */
export const ErrorCodes = {
  invalidParams: -32602,
  requestCancelled: -32800,
  sessionNotFound: -32001,
  sessionBusy: -32002,
  providerError: -32003,
  planChanged: -32004,
  methodNotFound: -32601,
} as const;
