// Baton: Show Plan, Approve Plan, Open Plan File.
import * as vscode from "vscode";
import type { Services } from "../services";
import { resolveSession } from "./activeSession";

export async function showPlan(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (sessionId) await services.plans.show(sessionId);
}

export async function approvePlan(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (!sessionId) return;
  await services.plans.approve(sessionId);
  void vscode.window.setStatusBarMessage("Baton: plan approved, building", 3000);
}

export async function openPlanFile(services: Services, given?: unknown): Promise<void> {
  const sessionId = await resolveSession(services, given);
  if (sessionId) await services.plans.openFile(sessionId);
}
