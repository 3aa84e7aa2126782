// Messages between the extension host and the sidebar webview, with guards.
import type { ErrorCause, Message, Mode, PermissionOption, PermissionToolCall, SessionInfo, SessionUpdate, ShownUpdate, TurnOutcome, WorkspaceTrustResult } from "../protocol";
import { hasType, isId, isMode, isRecord, isString, type Json } from "./guards";
import {
  parseAttachments,
  parseReviewInbound,
  parseReviewOutbound,
  REVIEW_INBOUND_TYPES,
  REVIEW_OUTBOUND_TYPES,
  type AttachmentRef,
  type ReviewInbound,
  type ReviewOutbound,
} from "../features/review/messages";
import {
  COMMAND_INBOUND_TYPES,
  COMMAND_OUTBOUND_TYPES,
  parseCommandInbound,
  parseCommandOutbound,
  type CommandInbound,
  type CommandOutbound,
} from "../features/composer/commandMessages";

export type ServerStatus = "stopped" | "starting" | "running" | "failed";

/** What the sidebar shows about the active session besides its transcript. */
export interface SessionInfoView {
  provider?: string;
  model?: string;
  tokens?: { input: number; cached: number; output: number; requests: number };
  /** The context the next request sends, of the model's window; cache figures when the server reports them. */
  context?: { tokens: number; contextWindow: number; cachedTokens?: number; cacheHitRate?: number };
  /** null: the session has no plan. `done`/`total`: ticked and all steps. */
  plan?: { path: string; status: string; version: number; done?: number; total?: number } | null;
}

/** What the sidebar shows about Workspace Trust: the server's answer and its notice, if any. */
export interface TrustView {
  trusted: boolean;
  source: WorkspaceTrustResult["source"];
  ignored: string[];
  /** The server's one plain sentence (the `workspace_trust` update), when it said it. */
  message?: string;
}

/** How the person can get a model: what the welcome state and error actions offer. */
export interface SetupView {
  /** The provider setting (undefined: the server decides: OpenAI with a key, else the
   * server at `baseUrl` when one is set, else local). */
  provider?: string;
  hasKey: boolean;
  /** `baton.baseUrl`, else OPENAI_BASE_URL of the environment VS Code runs in. */
  baseUrl?: string;
  /** Where `baseUrl` came from. */
  baseUrlFrom?: "setting" | "environment";
  /** `baton.model`: the workspace's (or the person's) model, chosen once for every session. */
  model?: string;
  /** With a server and no model: the models the server lists (`/v1/models`), to choose from. */
  serverModels?: string[];
  /** Why the server's models could not be listed. */
  serverModelsError?: string;
}

/** With a server and no model chosen, the welcome offers the server's models. */
export function needsServerModel(setup: SetupView): boolean {
  if (setup.model) return false;
  if (setup.provider === "openai-compatible") return true;
  return !setup.provider && !setup.hasKey && Boolean(setup.baseUrl);
}

/** Things the webview may ask the host to do for the person (each is a fixed command, no arguments). */
export const SIDEBAR_ACTIONS = [
  "setKey",
  "useLocalModel",
  "useCompatibleServer",
  "restartServer",
  "showLog",
  "setPythonPath",
  "newSession",
  "sessions",
  "manageTrust",
  "chooseModel",
] as const;
export type SidebarAction = (typeof SIDEBAR_ACTIONS)[number];

/** Host → webview. */
export type SidebarInbound =
  | { type: "server"; status: ServerStatus; message?: string }
  | { type: "sessions"; sessions: SessionInfo[]; activeSessionId: string | null }
  /** A session's history; `turns`: how each turn ended, shown where it was live. */
  | {
      type: "history";
      sessionId: string;
      title: string;
      mode: Mode;
      messages: Message[];
      running: boolean;
      turns?: TurnOutcome[];
      /** The retries and the compactions that gained nothing, shown where they were live. */
      notices?: ShownUpdate[];
    }
  | { type: "update"; sessionId: string; update: SessionUpdate }
  | { type: "userMessage"; sessionId: string; text: string }
  | { type: "turn"; sessionId: string; running: boolean; stopReason?: string; error?: string; cause?: ErrorCause }
  /** A child's history, for its transcript under its card (its live updates follow). */
  | { type: "childHistory"; sessionId: string; messages: Message[] }
  /** How a model is set up (the welcome state and the actions on errors). */
  | { type: "setup"; setup: SetupView }
  /** What the server ignores because the folder is not trusted (null: not known yet). */
  | { type: "trust"; trust: TrustView | null }
  /** Put the caret in the prompt box (New Session, the keybinding). */
  | { type: "focusPrompt" }
  | { type: "mode"; sessionId: string; mode: Mode }
  | {
      type: "permission";
      requestId: string;
      sessionId: string;
      toolCall: PermissionToolCall;
      options: PermissionOption[];
      diff?: string;
      /** Why it asks although allowed (a protected path); "Always allow" is then not offered. */
      reason?: string;
      /** A child session's tool asks (`sessionId` is the child's): its parent and agent. */
      parentId?: string;
      agent?: string;
    }
  | { type: "permissionClosed"; requestId: string }
  /** The proposal of tool call `toolCallId` was edited in the diff editor (false: edited back). */
  | { type: "permissionEdited"; toolCallId: string; edited: boolean }
  | { type: "error"; message: string }
  /** A turn ended with this answer: the session can be forked after it. */
  | { type: "forkPoint"; sessionId: string; messageId: string }
  | { type: "sessionInfo"; sessionId: string; info: SessionInfoView }
  | ReviewInbound
  | CommandInbound;

/** Webview → host. */
export type SidebarOutbound =
  | { type: "ready"; activeSessionId: string | null }
  | { type: "newSession"; mode: Mode }
  | { type: "selectSession"; sessionId: string }
  /** No session id: the host creates a session (in `mode`) first, so Send always works. */
  | { type: "prompt"; sessionId: string | null; text: string; mode?: Mode; attachments?: AttachmentRef[]; images?: ImageRef[] }
  /** Send the failed turn's prompt again. */
  | { type: "retry"; sessionId: string }
  /** A link in the transcript: the host shows the URL and opens it through VS Code. */
  | { type: "openLink"; url: string }
  | { type: "action"; action: SidebarAction }
  /** A code block's Copy / Insert (at the cursor of the active editor). */
  | { type: "codeAction"; action: "copy" | "insert"; text: string }
  | ReviewOutbound
  | CommandOutbound
  | { type: "cancel"; sessionId: string }
  /** A child's card: open the child's own transcript, read-only. */
  | { type: "openChild"; sessionId: string }
  | { type: "setMode"; sessionId: string; mode: Mode }
  | { type: "permissionAnswer"; requestId: string; optionId: string }
  | { type: "showPlan"; sessionId: string }
  | { type: "compact"; sessionId: string }
  /** The context meter was clicked: compact, history, context view. */
  | { type: "contextMenu"; sessionId: string }
  | { type: "renameSession"; sessionId: string }
  | { type: "deleteSession"; sessionId: string }
  | { type: "forkSession"; sessionId: string; messageId?: string }
  | { type: "exportSession"; sessionId: string }
  /** `sessionId` null: before the first prompt (the host starts a session in `mode`, then picks). */
  | { type: "pickModel"; sessionId: string | null; mode?: Mode }
  /** A model from the welcome's list of the server's models: the workspace's model from now on. */
  | { type: "useModel"; model: string }
  /** Said while the agent works: it waits on the server until the next step (`steer`) or the turn's end. */
  | { type: "queue"; sessionId: string; text: string; delivery: "steer" | "after_turn" }
  | { type: "unqueue"; sessionId: string; id: string }
  /** A child's card asks for the child's history, to show its transcript in the sidebar. */
  | { type: "childHistory"; sessionId: string };

/** Every message type the webview posts (each has one handler: src/shell/messageRegistry.ts). */
export const SIDEBAR_OUTBOUND_TYPES = [
  ...REVIEW_OUTBOUND_TYPES,
  ...COMMAND_OUTBOUND_TYPES,
  "ready",
  "newSession",
  "selectSession",
  "prompt",
  "cancel",
  "openChild",
  "setMode",
  "permissionAnswer",
  "showPlan",
  "compact",
  "contextMenu",
  "renameSession",
  "deleteSession",
  "forkSession",
  "exportSession",
  "pickModel",
  "useModel",
  "queue",
  "unqueue",
  "childHistory",
  "retry",
  "openLink",
  "action",
  "codeAction",
] as const;

export function parseSidebarOutbound(value: unknown): SidebarOutbound | undefined {
  if (!hasType(value, SIDEBAR_OUTBOUND_TYPES)) return undefined;
  const m: Json = value;
  switch (value.type) {
    case "ready":
      return { type: "ready", activeSessionId: isId(m.activeSessionId) ? m.activeSessionId : null };
    case "newSession":
      return isMode(m.mode) ? { type: "newSession", mode: m.mode } : undefined;
    case "selectSession":
    case "cancel":
    case "openChild":
    case "showPlan":
    case "compact":
    case "contextMenu":
    case "renameSession":
    case "deleteSession":
    case "exportSession":
      return isId(m.sessionId) ? { type: value.type, sessionId: m.sessionId } : undefined;
    case "queue":
      return isId(m.sessionId) && typeof m.text === "string" && m.text.trim() !== "" && m.text.length <= 100_000 && (m.delivery === "steer" || m.delivery === "after_turn")
        ? { type: "queue", sessionId: m.sessionId, text: m.text, delivery: m.delivery }
        : undefined;
    case "childHistory":
      return isId(m.sessionId) ? { type: "childHistory", sessionId: m.sessionId } : undefined;
    case "unqueue":
      return isId(m.sessionId) && isId(m.id) ? { type: "unqueue", sessionId: m.sessionId, id: m.id } : undefined;
    case "useModel":
      return typeof m.model === "string" && m.model.trim() !== "" && m.model.length <= 200 ? { type: "useModel", model: m.model.trim() } : undefined;
    case "pickModel":
      if (m.sessionId === null) return { type: "pickModel", sessionId: null, ...(isMode(m.mode) ? { mode: m.mode } : {}) };
      return isId(m.sessionId) ? { type: "pickModel", sessionId: m.sessionId } : undefined;
    case "forkSession":
      if (!isId(m.sessionId)) return undefined;
      if (m.messageId === undefined) return { type: "forkSession", sessionId: m.sessionId };
      return isId(m.messageId) ? { type: "forkSession", sessionId: m.sessionId, messageId: m.messageId } : undefined;
    case "prompt": {
      const attachments = parseAttachments(m.attachments);
      const images = parseImages(m.images);
      if (!images) return undefined;
      const sessionId = m.sessionId === null || m.sessionId === undefined ? null : isId(m.sessionId) ? m.sessionId : undefined;
      if (sessionId === undefined || !isString(m.text) || m.text.trim() === "" || !attachments) return undefined;
      if (m.mode !== undefined && !isMode(m.mode)) return undefined;
      return {
        type: "prompt",
        sessionId,
        text: m.text,
        ...(isMode(m.mode) ? { mode: m.mode } : {}),
        ...(attachments.length ? { attachments } : {}),
        ...(images.length ? { images } : {}),
      };
    }
    case "retry":
      return isId(m.sessionId) ? { type: "retry", sessionId: m.sessionId } : undefined;
    case "openLink":
      return isString(m.url, 8192) && m.url !== "" ? { type: "openLink", url: m.url } : undefined;
    case "codeAction":
      return (m.action === "copy" || m.action === "insert") && isString(m.text)
        ? { type: "codeAction", action: m.action, text: m.text }
        : undefined;
    case "action":
      return (SIDEBAR_ACTIONS as readonly unknown[]).includes(m.action)
        ? { type: "action", action: m.action as SidebarAction }
        : undefined;
    case "revert":
    case "openChange":
    case "showPendingChange":
    case "mentionQuery":
      return parseReviewOutbound(value);
    case "commandsQuery":
    case "builtinCommand":
      return parseCommandOutbound(value);
    case "setMode":
      return isId(m.sessionId) && isMode(m.mode) ? { type: "setMode", sessionId: m.sessionId, mode: m.mode } : undefined;
    case "permissionAnswer":
      return isId(m.requestId) && isId(m.optionId)
        ? { type: "permissionAnswer", requestId: m.requestId, optionId: m.optionId }
        : undefined;
  }
  return undefined;
}

const INBOUND_TYPES = [
  ...REVIEW_INBOUND_TYPES,
  ...COMMAND_INBOUND_TYPES,
  "server",
  "sessions",
  "history",
  "update",
  "userMessage",
  "turn",
  "childHistory",
  "mode",
  "permission",
  "permissionClosed",
  "permissionEdited",
  "error",
  "sessionInfo",
  "forkPoint",
  "setup",
  "focusPrompt",
  "trust",
] as const;

/** Shape check for what the host sends; the webview drops anything else. */
export function parseSidebarInbound(value: unknown): SidebarInbound | undefined {
  if (!hasType(value, INBOUND_TYPES)) return undefined;
  const m: Json = value;
  switch (value.type) {
    case "server":
      return isString(m.status) ? (value as unknown as SidebarInbound) : undefined;
    case "sessions":
      return Array.isArray(m.sessions) ? (value as unknown as SidebarInbound) : undefined;
    case "history":
      return isId(m.sessionId) &&
        Array.isArray(m.messages) &&
        (m.turns === undefined || Array.isArray(m.turns)) &&
        (m.notices === undefined || Array.isArray(m.notices))
        ? (value as unknown as SidebarInbound)
        : undefined;
    case "update":
      return isId(m.sessionId) && isRecord(m.update) && isString(m.update.kind)
        ? (value as unknown as SidebarInbound)
        : undefined;
    case "userMessage":
      return isId(m.sessionId) && isString(m.text) ? (value as unknown as SidebarInbound) : undefined;
    case "childHistory":
      return isId(m.sessionId) && Array.isArray(m.messages) ? (value as unknown as SidebarInbound) : undefined;
    case "turn":
      return isId(m.sessionId) && typeof m.running === "boolean" ? (value as unknown as SidebarInbound) : undefined;
    case "mode":
      return isId(m.sessionId) && isMode(m.mode) ? (value as unknown as SidebarInbound) : undefined;
    case "permission":
      return isId(m.requestId) && isRecord(m.toolCall) && Array.isArray(m.options)
        ? (value as unknown as SidebarInbound)
        : undefined;
    case "permissionClosed":
      return isId(m.requestId) ? (value as unknown as SidebarInbound) : undefined;
    case "permissionEdited":
      return isId(m.toolCallId) && typeof m.edited === "boolean"
        ? { type: "permissionEdited", toolCallId: m.toolCallId, edited: m.edited }
        : undefined;
    case "error":
      return isString(m.message) ? (value as unknown as SidebarInbound) : undefined;
    case "sessionInfo":
      return isId(m.sessionId) && isRecord(m.info) ? (value as unknown as SidebarInbound) : undefined;
    case "attach":
    case "mentionResults":
    case "messageMarks":
      return parseReviewInbound(value);
    case "commands":
      return parseCommandInbound(value);
    case "forkPoint":
      return isId(m.sessionId) && isId(m.messageId) ? (value as unknown as SidebarInbound) : undefined;
    case "setup":
      return isRecord(m.setup) && typeof m.setup.hasKey === "boolean" ? (value as unknown as SidebarInbound) : undefined;
    case "focusPrompt":
      return { type: "focusPrompt" };
    case "trust":
      return m.trust === null ||
        (isRecord(m.trust) && typeof m.trust.trusted === "boolean" && Array.isArray(m.trust.ignored) && m.trust.ignored.every((i) => isString(i)))
        ? (value as unknown as SidebarInbound)
        : undefined;
  }
  return undefined;
}

/** An image sent with a prompt: its bytes in base64 (the server checks them again). */
export interface ImageRef {
  mimeType: (typeof IMAGE_MIME_TYPES)[number];
  data: string;
  name: string;
}

export const IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
/** The server's limits (server/baton/agent/images.py, PromptParams.images). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_IMAGES = 8;

/** A prompt's images: absent is none; anything malformed drops the message. */
export function parseImages(value: unknown): ImageRef[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_IMAGES) return undefined;
  const out: ImageRef[] = [];
  for (const item of value) {
    if (typeof item !== "object" || item === null) return undefined;
    const { mimeType, data, name } = item as Record<string, unknown>;
    if (!(IMAGE_MIME_TYPES as readonly unknown[]).includes(mimeType)) return undefined;
    if (typeof data !== "string" || data === "" || data.length > 16_000_000) return undefined;
    if (typeof name !== "string" || name.length > 255) return undefined;
    out.push({ mimeType: mimeType as ImageRef["mimeType"], data, name });
  }
  return out;
}
