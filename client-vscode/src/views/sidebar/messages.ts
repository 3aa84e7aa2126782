// Messages between the extension host and the sidebar webview, with guards.
import type { Message, Mode, PermissionOption, PermissionToolCall, SessionInfo, SessionUpdate } from "../../protocol";
import { hasType, isId, isMode, isRecord, isString, type Json } from "../guards";
import {
  parseAttachments,
  parseReviewInbound,
  parseReviewOutbound,
  REVIEW_INBOUND_TYPES,
  REVIEW_OUTBOUND_TYPES,
  type AttachmentRef,
  type ReviewInbound,
  type ReviewOutbound,
} from "./reviewMessages";

export type ServerStatus = "stopped" | "starting" | "running" | "failed";

/** What the sidebar shows about the active session besides its transcript. */
export interface SessionInfoView {
  provider?: string;
  model?: string;
  tokens?: { input: number; cached: number; output: number; requests: number };
  context?: { tokens: number; contextWindow: number };
  /** null: the session has no plan. */
  plan?: { path: string; status: string; version: number } | null;
}

/** Host → webview. */
export type SidebarInbound =
  | { type: "server"; status: ServerStatus; message?: string }
  | { type: "sessions"; sessions: SessionInfo[]; activeSessionId: string | null }
  | { type: "history"; sessionId: string; title: string; mode: Mode; messages: Message[]; running: boolean }
  | { type: "update"; sessionId: string; update: SessionUpdate }
  | { type: "userMessage"; sessionId: string; text: string }
  | { type: "turn"; sessionId: string; running: boolean; stopReason?: string; error?: string }
  | { type: "mode"; sessionId: string; mode: Mode }
  | {
      type: "permission";
      requestId: string;
      sessionId: string;
      toolCall: PermissionToolCall;
      options: PermissionOption[];
      diff?: string;
    }
  | { type: "permissionClosed"; requestId: string }
  | { type: "error"; message: string }
  /** A turn ended with this answer: the session can be forked after it. */
  | { type: "forkPoint"; sessionId: string; messageId: string }
  | { type: "sessionInfo"; sessionId: string; info: SessionInfoView }
  | ReviewInbound;

/** Webview → host. */
export type SidebarOutbound =
  | { type: "ready"; activeSessionId: string | null }
  | { type: "newSession"; mode: Mode }
  | { type: "selectSession"; sessionId: string }
  | { type: "prompt"; sessionId: string; text: string; attachments?: AttachmentRef[] }
  | ReviewOutbound
  | { type: "cancel"; sessionId: string }
  | { type: "setMode"; sessionId: string; mode: Mode }
  | { type: "permissionAnswer"; requestId: string; optionId: string }
  | { type: "showPlan"; sessionId: string }
  | { type: "compact"; sessionId: string }
  | { type: "renameSession"; sessionId: string }
  | { type: "deleteSession"; sessionId: string }
  | { type: "forkSession"; sessionId: string; messageId?: string }
  | { type: "exportSession"; sessionId: string }
  | { type: "pickModel"; sessionId: string };

const OUTBOUND_TYPES = [
  ...REVIEW_OUTBOUND_TYPES,
  "ready",
  "newSession",
  "selectSession",
  "prompt",
  "cancel",
  "setMode",
  "permissionAnswer",
  "showPlan",
  "compact",
  "renameSession",
  "deleteSession",
  "forkSession",
  "exportSession",
  "pickModel",
] as const;

export function parseSidebarOutbound(value: unknown): SidebarOutbound | undefined {
  if (!hasType(value, OUTBOUND_TYPES)) return undefined;
  const m: Json = value;
  switch (value.type) {
    case "ready":
      return { type: "ready", activeSessionId: isId(m.activeSessionId) ? m.activeSessionId : null };
    case "newSession":
      return isMode(m.mode) ? { type: "newSession", mode: m.mode } : undefined;
    case "selectSession":
    case "cancel":
    case "showPlan":
    case "compact":
    case "renameSession":
    case "deleteSession":
    case "exportSession":
    case "pickModel":
      return isId(m.sessionId) ? { type: value.type, sessionId: m.sessionId } : undefined;
    case "forkSession":
      if (!isId(m.sessionId)) return undefined;
      if (m.messageId === undefined) return { type: "forkSession", sessionId: m.sessionId };
      return isId(m.messageId) ? { type: "forkSession", sessionId: m.sessionId, messageId: m.messageId } : undefined;
    case "prompt": {
      const attachments = parseAttachments(m.attachments);
      if (!isId(m.sessionId) || !isString(m.text) || m.text.trim() === "" || !attachments) return undefined;
      return {
        type: "prompt",
        sessionId: m.sessionId,
        text: m.text,
        ...(attachments.length ? { attachments } : {}),
      };
    }
    case "revert":
    case "openChange":
    case "showPendingChange":
    case "mentionQuery":
      return parseReviewOutbound(value);
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
  "server",
  "sessions",
  "history",
  "update",
  "userMessage",
  "turn",
  "mode",
  "permission",
  "permissionClosed",
  "error",
  "sessionInfo",
  "forkPoint",
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
      return isId(m.sessionId) && Array.isArray(m.messages) ? (value as unknown as SidebarInbound) : undefined;
    case "update":
      return isId(m.sessionId) && isRecord(m.update) && isString(m.update.kind)
        ? (value as unknown as SidebarInbound)
        : undefined;
    case "userMessage":
      return isId(m.sessionId) && isString(m.text) ? (value as unknown as SidebarInbound) : undefined;
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
    case "error":
      return isString(m.message) ? (value as unknown as SidebarInbound) : undefined;
    case "sessionInfo":
      return isId(m.sessionId) && isRecord(m.info) ? (value as unknown as SidebarInbound) : undefined;
    case "attach":
    case "mentionResults":
    case "messageMarks":
      return parseReviewInbound(value);
    case "forkPoint":
      return isId(m.sessionId) && isId(m.messageId) ? (value as unknown as SidebarInbound) : undefined;
  }
  return undefined;
}
