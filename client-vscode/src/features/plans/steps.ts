// Plan steps as the plan file writes them (task-list items, as the server's plan
// parser reads them): `- [ ]` open, `- [~]` in progress, `- [!]` blocked (a reason on
// the line), `- [x]` done. Pure, so the host (the sidebar's "2/5 done") and the plan
// webview (its checkboxes) count the same way.

export type StepState = "open" | "in_progress" | "blocked" | "done";

export interface PlanStep {
  state: StepState;
  text: string;
}

const STEP = /^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[([ xX~!])\][ \t]+(.+?)[ \t]*$/;
const FENCE = /^[ \t]*(```|~~~)/;

const STATES: Record<string, StepState> = { " ": "open", x: "done", X: "done", "~": "in_progress", "!": "blocked" };

/** The plan's steps in order; lines inside fenced code blocks are not steps. */
export function planSteps(content: string): PlanStep[] {
  const steps: PlanStep[] = [];
  let fence: string | undefined;
  for (const line of content.split("\n")) {
    const opened = FENCE.exec(line);
    if (opened) {
      const marker = opened[1] as string;
      if (fence === undefined) fence = marker;
      else if (fence === marker) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const match = STEP.exec(line);
    if (match) steps.push({ state: STATES[match[1] as string] ?? "open", text: match[2] as string });
  }
  return steps;
}

/** Done and total steps; an empty object when the plan has no task-list steps. */
export function countSteps(content: string): { done?: number; total?: number } {
  const steps = planSteps(content);
  if (steps.length === 0) return {};
  return { done: steps.filter((s) => s.state === "done").length, total: steps.length };
}
