// Messages between the extension host and the plan webview, with guards.
import type { PlanAnnotation, PlanInfo, PlanVersion } from "../../protocol";
import { hasType, isInt, isRecord, isString, type Json } from "../../shell/guards";
import { parseAnnotations } from "./annotations";

/** Host → webview. */
export type PlanInbound =
  /** `running`: a turn of the session is running (the agent may be building the plan). */
  | { type: "plan"; sessionId: string; title: string; plan: PlanInfo | null; versions: PlanVersion[]; running?: boolean }
  | { type: "versionContent"; version: number; content: string; author: string; createdAt: string }
  | { type: "versionUnavailable"; version: number; message: string }
  | { type: "busy"; busy: boolean }
  /** A plan built step by step: the step a child is building now (null: none is). */
  | { type: "step"; step: { index: number; total: number; description: string } | null }
  /** The review reached the server: the panel lets go of the annotations it sent. */
  | { type: "reviewSent" }
  | { type: "notice"; level: "info" | "error"; message: string }
  /** The panel came into view or went out of it (a version counts as seen only in view). */
  | { type: "inView"; visible: boolean };

/** Webview → host. */
export type PlanOutbound =
  | { type: "ready" }
  | { type: "refresh" }
  /** `fresh`: build in a fresh context (the default button), else keep the planning conversation in view.
   * `steps`: Baton builds each open step in a fresh child session, in order. */
  | { type: "approve"; fresh: boolean; steps?: boolean }
  /** The overall comment (may be empty when there are annotations) and the line-by-line annotations. */
  | { type: "requestChanges"; feedback: string; annotations: PlanAnnotation[] }
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
    case "openFile":
      return { type: value.type };
    case "approve":
      return m.steps === true ? { type: "approve", fresh: false, steps: true } : { type: "approve", fresh: m.fresh === true };
    case "requestChanges": {
      const annotations = m.annotations === undefined ? [] : parseAnnotations(m.annotations);
      if (!isString(m.feedback, 200_000) || !annotations) return undefined;
      return m.feedback.trim() !== "" || annotations.length > 0
        ? { type: "requestChanges", feedback: m.feedback, annotations }
        : undefined;
    }
    case "getVersion":
      return isInt(m.version) ? { type: "getVersion", version: m.version } : undefined;
    case "openLink":
      return isString(m.url, 8192) && m.url !== "" ? { type: "openLink", url: m.url } : undefined;
  }
  return undefined;
}

const INBOUND = ["plan", "versionContent", "versionUnavailable", "busy", "step", "reviewSent", "notice", "inView"] as const;

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
    case "inView":
      return typeof m.visible === "boolean" ? { type: "inView", visible: m.visible } : undefined;
    case "step":
      return m.step === null || (isRecord(m.step) && isInt(m.step.index) && isInt(m.step.total) && isString(m.step.description))
        ? (value as unknown as PlanInbound)
        : undefined;
    case "reviewSent":
      return { type: "reviewSent" };
    case "notice":
      return (m.level === "info" || m.level === "error") && isString(m.message)
        ? (value as unknown as PlanInbound)
        : undefined;
  }
  return undefined;
}
