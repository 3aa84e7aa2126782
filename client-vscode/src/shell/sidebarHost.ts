// What a feature's sidebar handlers work with: the sidebar's view, its session
// machinery and the server connection. SidebarProvider is the one implementation.
import type { BatonClient } from "../client/batonClient";
import type { Mode, SessionInfo } from "../protocol";
import type { AttachmentRef } from "../features/review/messages";
import type { SessionState } from "../state/sessionState";
import type { ImageRef, SidebarInbound } from "./messages";

export interface SidebarHost {
  readonly client: BatonClient;
  readonly state: SessionState;
  /** To the webview (dropped when there is no view). */
  post(message: SidebarInbound): void;
  /** The view is there, visible, and its script has said "ready". */
  readonly isReady: boolean;
  readonly isVisible: boolean;
  /** Reveals the sidebar (its view is then resolved, if it was not). */
  reveal(): Promise<void>;
  newSession(mode: Mode, options?: { planPath?: string }): Promise<string>;
  /** Makes the session the active one and shows it (loaded once). */
  activate(sessionId: string): Promise<void>;
  refreshSessions(): Promise<SessionInfo[]>;
  prompt(sessionId: string, text: string, attachments?: AttachmentRef[], images?: ImageRef[]): Promise<void>;
  retry(sessionId: string): Promise<void>;
  setMode(sessionId: string, mode: Mode): Promise<void>;
  openChild(sessionId: string): Promise<void>;
}
