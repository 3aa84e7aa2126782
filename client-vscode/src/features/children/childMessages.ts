// Child sessions (delegation) as both sides of the sidebar see them: the `child`
// update a parent's stream carries for each child of a `task` call, its guard, and
// how a child is told apart in the sessions list. Shared by the host and the webview.
import type { ChildStep, ChildUpdate } from "../../protocol";
import { isId, isInt, isRecord, isString } from "../../shell/guards";

export type ChildStatus = ChildUpdate["status"];
export const CHILD_STATUSES = ["running", "done", "failed", "cancelled", "max_steps"] as const satisfies readonly ChildStatus[];

/** A `child` update on the parent's stream (sent when a child starts, changes tool, and
 * ends), with the server's defaults filled in. `callId`: the parent's `task` call. */
export interface ChildProgress extends Omit<ChildUpdate, "tokens" | "currentTool" | "step"> {
  tokens: number;
  currentTool: string | null;
  /** During a plan built step by step: which step this child builds. */
  step: ChildStep | null;
}

/** The update as a `child` update, or undefined (another kind, or malformed: dropped). */
export function parseChildProgress(value: unknown): ChildProgress | undefined {
  if (!isRecord(value) || value.kind !== "child") return undefined;
  const { callId, childId, agent, description, status, currentTool, tokens, step } = value;
  if (!isId(callId) || !isId(childId) || !isString(agent, 200) || !isString(description, 10_000)) return undefined;
  if (!(CHILD_STATUSES as readonly unknown[]).includes(status)) return undefined;
  if (tokens !== undefined && !isInt(tokens)) return undefined;
  if (currentTool !== undefined && currentTool !== null && !isString(currentTool, 1_000)) return undefined;
  let parsedStep: ChildProgress["step"] = null;
  if (step !== undefined && step !== null) {
    if (!isRecord(step) || !isInt(step.index) || !isInt(step.total) || step.index < 1 || step.index > step.total) return undefined;
    parsedStep = { index: step.index, total: step.total };
  }
  return {
    kind: "child",
    callId,
    childId,
    agent,
    description,
    status: status as ChildStatus,
    currentTool: currentTool ?? null,
    tokens: tokens ?? 0,
    step: parsedStep,
  };
}

/** Who asks, on a permission request a child's tool made. */
export interface ChildAsker {
  parentId: string;
  agent: string;
}

/** The `parentId` and `agent` of a child's permission request, or undefined (the session itself asks). */
export function childAsker(params: unknown): ChildAsker | undefined {
  if (!isRecord(params) || !isId(params.parentId)) return undefined;
  return { parentId: params.parentId, agent: isString(params.agent, 200) ? params.agent : "" };
}

/** A row of `baton/session/list` that is a child session (it carries its parent's id). */
export function parentOf(session: unknown): string | undefined {
  return isRecord(session) && isId(session.parentId) ? session.parentId : undefined;
}

/** A row's agent (null or absent for top-level sessions). */
export function agentOf(session: unknown): string | undefined {
  return isRecord(session) && isString(session.agent, 200) && session.agent !== "" ? session.agent : undefined;
}

/** Sessions newest first, each parent followed by its children (oldest child first). */
export function nestChildren<T extends { sessionId: string; updatedAt: string; createdAt: string }>(sessions: T[]): Array<{ session: T; depth: 0 | 1 }> {
  const newestFirst = [...sessions].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  const ids = new Set(sessions.map((s) => s.sessionId));
  const children = new Map<string, T[]>();
  for (const s of sessions) {
    const parent = parentOf(s);
    if (parent && ids.has(parent)) children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const out: Array<{ session: T; depth: 0 | 1 }> = [];
  for (const s of newestFirst) {
    const parent = parentOf(s);
    // A child whose parent is gone is listed on its own.
    if (parent && ids.has(parent)) continue;
    out.push({ session: s, depth: 0 });
    const own = [...(children.get(s.sessionId) ?? [])].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
    for (const child of own) out.push({ session: child, depth: 1 });
  }
  return out;
}

/** How a child's status reads on its card. */
export const CHILD_STATUS_LABELS: Record<ChildStatus, string> = {
  running: "running",
  done: "done",
  failed: "failed",
  cancelled: "stopped",
  max_steps: "stopped at its step limit",
};
