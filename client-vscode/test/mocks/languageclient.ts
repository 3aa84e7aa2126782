// A stand-in for vscode-languageclient/node: records handlers, answers
// requests from a per-test table, and lets tests push server notifications.
import { vi } from "vitest";

export const State = { Stopped: 1, Starting: 3, Running: 2 } as const;
export const CloseAction = { DoNotRestart: 1, Restart: 2 } as const;
export const ErrorAction = { Continue: 1, Shutdown: 2 } as const;

export type RequestResponder = (params: unknown) => unknown;

export interface FakeLanguageClient {
  serverOptions: unknown;
  clientOptions: { initializationOptions?: unknown; errorHandler?: unknown };
  notificationHandlers: Map<string, (params: unknown) => void>;
  requestHandlers: Map<string, (params: unknown, token: unknown) => unknown>;
  sendRequest: ReturnType<typeof vi.fn>;
  sendNotification: ReturnType<typeof vi.fn>;
  start: ReturnType<typeof vi.fn>;
  stop: ReturnType<typeof vi.fn>;
  dispose: ReturnType<typeof vi.fn>;
}

export const fake = {
  clients: [] as FakeLanguageClient[],
  responders: new Map<string, RequestResponder>(),
  startError: undefined as Error | undefined,
  /** When true, start() never settles (a server that never answers initialize). */
  hangStart: false,
  reset(): void {
    this.clients.length = 0;
    this.responders.clear();
    this.startError = undefined;
    this.hangStart = false;
  },
  get last(): FakeLanguageClient {
    const client = this.clients[this.clients.length - 1];
    if (!client) throw new Error("no LanguageClient was created");
    return client;
  },
};

export const LanguageClient = vi.fn(function (
  this: FakeLanguageClient & { stateListeners: Array<(e: { oldState: number; newState: number }) => void> },
  _id: string,
  _name: string,
  serverOptions: unknown,
  clientOptions: FakeLanguageClient["clientOptions"],
) {
  this.serverOptions = serverOptions;
  this.clientOptions = clientOptions;
  this.notificationHandlers = new Map();
  this.requestHandlers = new Map();
  this.stateListeners = [];
  const self = this;
  Object.assign(this, {
    onNotification: (method: string, handler: (params: unknown) => void) => {
      self.notificationHandlers.set(method, handler);
      return { dispose() {} };
    },
    onRequest: (method: string, handler: (params: unknown, token: unknown) => unknown) => {
      self.requestHandlers.set(method, handler);
      return { dispose() {} };
    },
    onDidChangeState: (listener: (e: { oldState: number; newState: number }) => void) => {
      self.stateListeners.push(listener);
      return { dispose() {} };
    },
    sendRequest: vi.fn(async (method: string, params: unknown) => {
      const responder = fake.responders.get(method);
      if (!responder) throw Object.assign(new Error(`Unhandled method ${method}`), { code: -32601 });
      return responder(params);
    }),
    sendNotification: vi.fn(async () => undefined),
    start: vi.fn(async () => {
      if (fake.hangStart) await new Promise(() => undefined);
      if (fake.startError) throw fake.startError;
      for (const l of self.stateListeners) l({ oldState: State.Starting, newState: State.Running });
    }),
    stop: vi.fn(async () => undefined),
    dispose: vi.fn(async () => undefined),
  });
  fake.clients.push(this);
});
