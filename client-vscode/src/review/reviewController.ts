// Reviewing the agent's file changes in VS Code's own diff editor.
//
// Before a write or edit, the server's permission request carries a unified
// diff. The controller opens the diff editor on two read-only virtual
// documents (the file as it is, and as the change would leave it) with Accept
// and Reject in the editor's title bar, while the sidebar (or a notification)
// shows the same request with Allow once / Always allow / Reject. Whichever
// answers first answers the server; the other closes. After the fact, any
// completed change can be opened the same way from the checkpoint store
// (`baton/session/changes`), which is what keeps writes allowed without asking
// reviewable.
import * as vscode from "vscode";
import type { BatonClient } from "../client/batonClient";
import type { PermissionOption, PermissionRequestParams, PermissionResponse } from "../protocol";
import { isReviewable, proposedContent, toolPath } from "./proposed";
import { ReviewDocuments } from "./reviewDocuments";

/** Context key: the paths of the virtual documents of changes waiting for a decision. */
export const PENDING_CONTEXT = "baton.pendingReviewPaths";

export type AskPermission = (params: PermissionRequestParams, token: vscode.CancellationToken) => Promise<PermissionResponse>;

export interface PendingReview {
  key: string;
  sessionId: string;
  toolCallId: string;
  path: string;
  title: string;
  before: vscode.Uri;
  after: vscode.Uri;
  options: PermissionOption[];
  decision: Promise<string>;
  decide(optionId: string): void;
}

export class ReviewController implements vscode.Disposable {
  private readonly pending = new Map<string, PendingReview>();

  constructor(
    private readonly client: BatonClient,
    private readonly documents: ReviewDocuments,
    private readonly ask: AskPermission,
    private readonly workspaceFolder: () => vscode.WorkspaceFolder | undefined,
  ) {}

  /** The permission handler: writes and edits are also shown in the diff editor. */
  async handlePermission(params: PermissionRequestParams, token: vscode.CancellationToken): Promise<PermissionResponse> {
    const { toolCall } = params;
    if (!isReviewable(toolCall.name, params.diff)) return this.ask(params, token);
    // Opening the diff must never stand in the way of answering the request.
    const review = await this.open(params, params.diff).catch(() => undefined);
    if (!review) return this.ask(params, token);
    const source = new vscode.CancellationTokenSource();
    const forward = token.onCancellationRequested(() => source.cancel());
    try {
      const fromPrompt = this.ask(params, source.token);
      const fromDiff = review.decision.then((optionId): PermissionResponse => ({ outcome: { optionId } }));
      const answer = await Promise.race([fromPrompt, fromDiff]);
      source.cancel(); // the sidebar card (or the notification's wait) closes
      return answer;
    } finally {
      forward.dispose();
      source.dispose();
      await this.close(review);
    }
  }

  get pendingReviews(): PendingReview[] {
    return [...this.pending.values()];
  }

  /** Accept (allow once) the change shown in `uri`'s diff editor, else the active one, else the latest. */
  accept(uri?: unknown): boolean {
    return this.decide(uri, "allow_once");
  }

  /** Reject the change shown in `uri`'s diff editor, else the active one, else the latest. */
  reject(uri?: unknown): boolean {
    return this.decide(uri, "reject_once");
  }

  private decide(uri: unknown, kind: "allow_once" | "reject_once"): boolean {
    const review = this.find(uri);
    if (!review) {
      void vscode.window.showInformationMessage("Baton: no change is waiting for review.");
      return false;
    }
    const option = review.options.find((o) => o.kind === kind);
    if (!option) return false;
    review.decide(option.optionId);
    return true;
  }

  private find(uri: unknown): PendingReview | undefined {
    const byUri = (u: vscode.Uri) => this.pending.get(u.path.split("/")[1] ?? "");
    if (uri instanceof vscode.Uri) return byUri(uri);
    const input = vscode.window.tabGroups?.activeTabGroup?.activeTab?.input;
    if (input instanceof vscode.TabInputTextDiff) {
      const found = byUri(input.modified);
      if (found) return found;
    }
    return this.pendingReviews.at(-1);
  }

  /** Shows a waiting change's diff again (its tab was closed), by tool call or the latest. */
  async showPending(toolCallId?: string): Promise<boolean> {
    const review = this.pendingReviews.filter((r) => !toolCallId || r.toolCallId === toolCallId).at(-1);
    if (!review) return false;
    await this.showDiff(review.before, review.after, review.title);
    return true;
  }

  /** Opens the before/after of a completed change (from the checkpoint store) in the diff editor. */
  async openChange(sessionId: string, toolCallId: string): Promise<number> {
    const { changes } = await this.client.request("baton/session/changes", { sessionId, toolCallId });
    if (changes.length === 0) {
      void vscode.window.showInformationMessage("Baton: that tool call changed no files.");
      return 0;
    }
    let opened = 0;
    for (const change of changes) {
      if (change.omitted) {
        const why = change.omitted === "binary" ? "a binary file" : "too large to show";
        void vscode.window.showInformationMessage(`Baton: ${change.path} is ${why}; its change cannot be shown as text.`);
        continue;
      }
      const pair = this.documents.pair("change", change.path);
      this.documents.set(pair.before, change.before ?? "");
      this.documents.set(pair.after, change.after ?? "");
      const what = !change.existedBefore ? "created" : !change.existsAfter ? "deleted" : "changed";
      await this.showDiff(pair.before, pair.after, `${change.path}: ${what} by Baton${change.reverted ? " (reverted)" : ""}`);
      opened += 1;
    }
    return opened;
  }

  private async open(params: PermissionRequestParams, diff: string): Promise<PendingReview> {
    const { toolCall } = params;
    const path = toolPath(toolCall.input) ?? toolCall.name;
    const current = await this.readCurrent(path);
    const proposed = proposedContent({ tool: toolCall.name, input: toolCall.input, diff, current });
    const pair = this.documents.pair("proposal", path);
    this.documents.set(pair.before, current ?? "");
    // Should the diff not apply (the file changed meanwhile), the diff itself is shown.
    this.documents.set(pair.after, proposed ?? diff);
    let decide: (optionId: string) => void = () => undefined;
    const decision = new Promise<string>((resolve) => {
      decide = resolve;
    });
    const verb = current === undefined ? "create" : toolCall.name === "write" ? "overwrite" : "edit";
    const review: PendingReview = {
      key: pair.key,
      sessionId: params.sessionId,
      toolCallId: toolCall.toolCallId,
      path,
      // A protected path asks even when writes are allowed: the title says so (the sidebar says why).
      title: `Baton wants to ${verb} ${path}${params.reason ? " (protected path: always asks)" : ""} (Accept ✓ / Reject ✗)`,
      before: pair.before,
      after: pair.after,
      options: params.options,
      decision,
      decide,
    };
    this.pending.set(review.key, review);
    await this.updateContext();
    await this.showDiff(review.before, review.after, review.title);
    return review;
  }

  private async close(review: PendingReview): Promise<void> {
    this.pending.delete(review.key);
    await this.updateContext();
    const groups = vscode.window.tabGroups;
    const tabs = (groups?.all ?? [])
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === review.after.toString());
    if (tabs.length > 0) await Promise.resolve(groups.close(tabs)).catch(() => undefined);
    this.documents.forget(review.before);
    this.documents.forget(review.after);
  }

  private async showDiff(before: vscode.Uri, after: vscode.Uri, title: string): Promise<void> {
    await vscode.commands.executeCommand("vscode.diff", before, after, title, { preview: true });
  }

  private async updateContext(): Promise<void> {
    const paths = this.pendingReviews.flatMap((r) => [r.before.path, r.after.path]);
    await vscode.commands.executeCommand("setContext", PENDING_CONTEXT, paths);
    await vscode.commands.executeCommand("setContext", "baton.hasPendingReview", paths.length > 0);
  }

  /** The file's text on disk (what the server's diff was computed from); undefined if absent. */
  private async readCurrent(path: string): Promise<string | undefined> {
    const folder = this.workspaceFolder();
    const uri = path.startsWith("/") ? vscode.Uri.file(path) : folder ? vscode.Uri.joinPath(folder.uri, path) : undefined;
    if (!uri) return undefined;
    try {
      return new TextDecoder("utf-8").decode(await vscode.workspace.fs.readFile(uri));
    } catch {
      return undefined;
    }
  }

  dispose(): void {
    for (const review of this.pending.values()) {
      const reject = review.options.find((o) => o.kind === "reject_once");
      if (reject) review.decide(reject.optionId);
    }
    this.pending.clear();
  }
}
