// What the sidebar's webview posts, each message type handled by the one feature that
// owns it. Features register their handlers at activation (src/features/index.ts), as
// the server's feature modules register their methods; the sidebar only dispatches.
import type { SidebarOutbound } from "./messages";
import { parseSidebarOutbound } from "./messages";

/** A message type's owner: its guard (undefined: malformed) and what it does. */
export interface MessageHandler<M> {
  parse(raw: unknown): M | undefined;
  handle(message: M): Promise<void> | void;
}

export type SidebarOutboundType = SidebarOutbound["type"];
export type SidebarOutboundOf<T extends SidebarOutboundType> = Extract<SidebarOutbound, { type: T }>;

export interface Registration {
  dispose(): void;
}

export class MessageRegistry {
  private readonly handlers = new Map<string, MessageHandler<unknown>>();

  constructor(
    /** Where a message no handler takes is reported (the server log's channel). */
    private readonly logError: (line: string) => void,
  ) {}

  /** Each type has exactly one owner: a second registration is a wiring mistake and throws. */
  register<M>(type: string, handler: MessageHandler<M>): Registration {
    if (this.handlers.has(type)) throw new Error(`the sidebar message '${type}' already has a handler`);
    this.handlers.set(type, handler as MessageHandler<unknown>);
    return {
      dispose: () => {
        if (this.handlers.get(type) === handler) this.handlers.delete(type);
      },
    };
  }

  /** A message of the sidebar's own contract (src/shell/messages.ts), checked by its guard. */
  on<T extends SidebarOutboundType>(type: T, handle: (message: SidebarOutboundOf<T>) => Promise<void> | void): Registration {
    return this.register<SidebarOutboundOf<T>>(type, {
      parse: (raw) => {
        const message = parseSidebarOutbound(raw);
        return message?.type === type ? (message as SidebarOutboundOf<T>) : undefined;
      },
      handle,
    });
  }

  /** The message types that have a handler. */
  types(): string[] {
    return [...this.handlers.keys()];
  }

  /**
   * Runs the handler of the message's type. A message that is not one, has a type no
   * feature handles, or fails its type's guard changes nothing and is logged (false).
   * A handler's own failure is the caller's to report.
   */
  async dispatch(raw: unknown): Promise<boolean> {
    const type = typeof raw === "object" && raw !== null ? (raw as { type?: unknown }).type : undefined;
    if (typeof type !== "string") {
      this.logError("[sidebar] the webview posted something that is not a message (no string 'type'); ignored");
      return false;
    }
    const handler = this.handlers.get(type);
    if (!handler) {
      this.logError(`[sidebar] no feature handles the webview message '${type.slice(0, 80)}'; ignored`);
      return false;
    }
    const message = handler.parse(raw);
    if (message === undefined) {
      this.logError(`[sidebar] the webview message '${type}' is malformed; ignored`);
      return false;
    }
    await handler.handle(message);
    return true;
  }
}
