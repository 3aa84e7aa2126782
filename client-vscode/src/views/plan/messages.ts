// Messages between the extension host and the plan webview, with guards.
import type { PlanInfo, PlanVersion } from "../../protocol";
import { hasType, isInt, isRecord, isString, type Json } from "../guards";

/** Host → webview. */
export type PlanInbound =
  /** `running`: a turn of the session is running (the agent may be building the plan). */
  | { type: "plan"; sessionId: string; title: string; plan: PlanInfo | null; versions: PlanVersion[]; running?: boolean }
  | { type: "versionContent"; version: number; content: string; author: string; createdAt: string }
  | { type: "versionUnavailable"; version: number; message: string }
  | { type: "busy"; busy: boolean }
  | { type: "notice"; level: "info" | "error"; message: string };

/** Webview → host. */
export type PlanOutbound =
  | { type: "ready" }
  | { type: "refresh" }
  | { type: "approve" }
  | { type: "requestChanges"; feedback: string }
  | { type: "openFile" }
  | { type: "getVersion"; version: number }
  /** A link in the plan: the host shows the URL and opens it through VS Code. */
  | { type: "openLink"; url: string };

const OUTBOUND = ["ready", "refresh", "approve", "requestChanges", "openFile", "getVersion", "openLink"] as const;

export function parsePlanOutbound(value: unknown): PlanOutbound | undefined {
  if (!hasType(value, OUTBOUND)) return undefined;
  const m: Json = value;
  switch (value.type) {
    case "ready":
    case "refresh":
    case "approve":
    case "openFile":
      return { type: value.type };
    case "requestChanges":
      return isString(m.feedback, 200_000) && m.feedback.trim() !== ""
        ? { type: "requestChanges", feedback: m.feedback }
        : undefined;
    case "getVersion":
      return isInt(m.version) ? { type: "getVersion", version: m.version } : undefined;
    case "openLink":
      return isString(m.url, 8192) && m.url !== "" ? { type: "openLink", url: m.url } : undefined;
  }
  return undefined;
}

const INBOUND = ["plan", "versionContent", "versionUnavailable", "busy", "notice"] as const;

export function parsePlanInbound(value: unknown): PlanInbound | undefined {
  if (!hasType(value, INBOUND)) return undefined;
  const m: Json = value;
  switch (value.type) {
    case "plan":
      return isString(m.sessionId) && Array.isArray(m.versions) && (m.plan === null || isRecord(m.plan))
        ? (value as unknown as PlanInbound)
        : undefined;
    case "versionContent":
      return isInt(m.version) && isString(m.content) ? (value as unknown as PlanInbound) : undefined;
    case "versionUnavailable":
      return isInt(m.version) && isString(m.message) ? (value as unknown as PlanInbound) : undefined;
    case "busy":
      return typeof m.busy === "boolean" ? (value as unknown as PlanInbound) : undefined;
    case "notice":
      return (m.level === "info" || m.level === "error") && isString(m.message)
        ? (value as unknown as PlanInbound)
        : undefined;
  }
  return undefined;
}
