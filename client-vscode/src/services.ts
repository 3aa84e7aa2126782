// What the commands work with, gathered in one place at activation.
import type * as vscode from "vscode";
import type { BatonClient } from "./client/batonClient";
import type { WorkspaceTrust } from "./client/workspaceTrust";
import type { ReviewController } from "./features/review/reviewController";
import type { CompactionHistory } from "./features/compaction/compactionHistory";
import type { SessionState } from "./state/sessionState";
import type { PlanPanels } from "./features/plans/planPanels";
import type { PlansView } from "./features/plans/plansView";
import type { SidebarProvider } from "./shell/sidebarProvider";

export interface Services {
  client: BatonClient;
  state: SessionState;
  sidebar: SidebarProvider;
  plans: PlanPanels;
  /** The workspace's plan files (the Plans view). */
  plansView: PlansView;
  secrets: vscode.SecretStorage;
  output: vscode.LogOutputChannel;
  /** Diffs before edits, and completed changes, in VS Code's diff editor. */
  review: ReviewController;
  /** Compaction history as a read-only document with Undo per record. */
  history: CompactionHistory;
  /** VS Code's Workspace Trust as the server knows it, and what it ignores meanwhile. */
  trust: WorkspaceTrust;
  /** Baton itself is writing settings (and restarts the server after): do not ask to restart. */
  settingsChanging?: boolean;
}

export const OPENAI_KEY_SECRET = "baton.openai.apiKey";
