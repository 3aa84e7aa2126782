// Baton: Show Plan, Approve Plan (in a fresh context, or keeping the planning context), Open Plan File.
import * as vscode from "vscode";
import type { Services } from "../../services";
import { resolveSession } from "../sessions/activeSession";

export async function showPlan(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (sessionId) await services.plans.show(sessionId);
}

/** Approve and build; `fresh` (the default, as in the plan panel): in a fresh context. */
export async function approvePlan(services: Services, given?: unknown, fresh = true): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return;
  await services.plans.approve(sessionId, { fresh });
  void vscode.window.setStatusBarMessage(fresh ? "Baton: plan approved, building in a fresh context" : "Baton: plan approved, building", 3000);
}

/** Approve and let Baton build each open step in a fresh child session, in order. */
export async function approvePlanStepByStep(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return;
  await services.plans.approve(sessionId, { fresh: false, steps: true });
  void vscode.window.setStatusBarMessage("Baton: plan approved, building it step by step", 3000);
}

export async function openPlanFile(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (sessionId) await services.plans.openFile(sessionId);
}
