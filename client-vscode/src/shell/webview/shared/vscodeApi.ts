// The webview side of the host channel: acquireVsCodeApi, typed.

interface VsCodeApi<S> {
  postMessage(message: unknown): void;
  getState(): S | undefined;
  setState(state: S): void;
}

declare function acquireVsCodeApi<S>(): VsCodeApi<S>;

export interface HostChannel<Out, S> {
  post(message: Out): void;
  getState(): S | undefined;
  setState(state: S): void;
  /** Calls `handler` for every message that passes `parse`; everything else is dropped. */
  onMessage<In>(parse: (raw: unknown) => In | undefined, handler: (message: In) => void): void;
}

export function connectHost<Out, S>(): HostChannel<Out, S> {
  const api = acquireVsCodeApi<S>();
  return {
    post: (message) => api.postMessage(message),
    getState: () => api.getState(),
    setState: (state) => api.setState(state),
    onMessage(parse, handler) {
      window.addEventListener("message", (event: MessageEvent<unknown>) => {
        // Messages from the extension host arrive from the webview's own origin (the outer frame).
        const message = parse(event.data);
        if (message !== undefined) handler(message);
      });
    },
  };
}
