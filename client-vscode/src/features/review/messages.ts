// The review feature's messages between the sidebar host and its webview
// (attachments, mentions, per-turn undo, change diffs), with their guards.
import type { LineRange } from "../../protocol";
import { isId, isInt, isRecord, isString, type Json } from "../../shell/guards";

/** An attachment as the sidebar holds it before the prompt is sent. */
export interface AttachmentRef {
  uri: string;
  /** What the chip shows: `src/app.py:10-12`. */
  label: string;
  range?: LineRange;
}

/** What the webview needs to put ids, undo buttons and "reverted" on its messages. */
export interface MessageMark {
  id: string;
  role: "user" | "assistant" | "system";
  reverted: boolean;
  /** A user message's text (the webview matches its prompt nodes by it). */
  text?: string;
}

export type ReviewInbound =
  | { type: "attach"; attachment: AttachmentRef }
  | { type: "mentionResults"; query: string; paths: string[] }
  | { type: "messageMarks"; sessionId: string; messages: MessageMark[] };

export type ReviewOutbound =
  | { type: "revert"; sessionId: string; messageId: string }
  | { type: "openChange"; sessionId: string; toolCallId: string }
  | { type: "showPendingChange"; toolCallId: string }
  | { type: "mentionQuery"; query: string };

export const REVIEW_OUTBOUND_TYPES = ["revert", "openChange", "showPendingChange", "mentionQuery"] as const;
export const REVIEW_INBOUND_TYPES = ["attach", "mentionResults", "messageMarks"] as const;

const MAX_ATTACHMENTS = 50;

function isPosition(value: unknown): value is { line: number; character: number } {
  return isRecord(value) && isInt(value.line) && isInt(value.character);
}

export function parseAttachment(value: unknown): AttachmentRef | undefined {
  if (!isRecord(value) || !isString(value.uri, 4096) || value.uri === "" || !isString(value.label, 4096)) return undefined;
  const ref: AttachmentRef = { uri: value.uri, label: value.label };
  if (value.range !== undefined) {
    const range = value.range;
    if (!isRecord(range) || !isPosition(range.start) || !isPosition(range.end)) return undefined;
    ref.range = {
      start: { line: range.start.line, character: range.start.character },
      end: { line: range.end.line, character: range.end.character },
    };
  }
  return ref;
}

/** The attachments of a prompt message: absent is none; anything malformed drops the message. */
export function parseAttachments(value: unknown): AttachmentRef[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_ATTACHMENTS) return undefined;
  const refs = value.map(parseAttachment);
  return refs.every((r): r is AttachmentRef => r !== undefined) ? refs : undefined;
}

export function parseReviewOutbound(m: Json & { type: string }): ReviewOutbound | undefined {
  switch (m.type) {
    case "revert":
      return isId(m.sessionId) && isId(m.messageId) ? { type: "revert", sessionId: m.sessionId, messageId: m.messageId } : undefined;
    case "openChange":
      return isId(m.sessionId) && isId(m.toolCallId)
        ? { type: "openChange", sessionId: m.sessionId, toolCallId: m.toolCallId }
        : undefined;
    case "showPendingChange":
      return isId(m.toolCallId) ? { type: "showPendingChange", toolCallId: m.toolCallId } : undefined;
    case "mentionQuery":
      return isString(m.query, 500) ? { type: "mentionQuery", query: m.query } : undefined;
  }
  return undefined;
}

export function parseReviewInbound(m: Json & { type: string }): ReviewInbound | undefined {
  switch (m.type) {
    case "attach": {
      const attachment = parseAttachment(m.attachment);
      return attachment ? { type: "attach", attachment } : undefined;
    }
    case "mentionResults":
      return isString(m.query, 500) && Array.isArray(m.paths) && m.paths.every((p) => isString(p, 4096))
        ? { type: "mentionResults", query: m.query, paths: m.paths as string[] }
        : undefined;
    case "messageMarks":
      return isId(m.sessionId) && Array.isArray(m.messages) && m.messages.every((x) => isRecord(x) && isId(x.id))
        ? (m as unknown as ReviewInbound)
        : undefined;
  }
  return undefined;
}
