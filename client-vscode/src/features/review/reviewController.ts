// Reviewing the agent's file changes in VS Code's own diff editor.
//
// Before a write or edit, the server's permission request carries a unified
// diff. The controller opens the diff editor on the file as it is (read-only)
// and the proposal as an editable in-memory file (proposalFiles.ts), with Accept
// and Reject in the editor's title bar, while the sidebar (or a notification)
// shows the same request with Allow once / Always allow / Reject. Whichever
// answers first answers the server; the other closes. If the person changed the
// proposal (typed in it, or undid hunks with the diff editor's arrows), an allow
// answer carries their text as `outcome.editedContent`, and the sidebar's card
// says so while they edit. After the fact, any completed change can be opened
// from the checkpoint store (`baton/session/changes`), which is what keeps writes
// allowed without asking reviewable; when the file still holds that change, its
// right side is the workspace file itself, so a hunk can be undone with its arrow.
import * as vscode from "vscode";
import type { BatonClient } from "../../client/batonClient";
import type { PermissionOption, PermissionRequestParams, PermissionResponse } from "../../protocol";
import { diffColumn } from "./diffColumn";
import type { ProposalFiles } from "./proposalFiles";
import { isReviewable, proposedContent, toolPath } from "./proposed";
import { ReviewDocuments } from "./reviewDocuments";

/** Context key: the paths of the virtual documents of changes waiting for a decision. */
export const PENDING_CONTEXT = "baton.pendingReviewPaths";

export type AskPermission = (
  params: PermissionRequestParams,
  token: vscode.CancellationToken,
  options?: { editable?: boolean },
) => Promise<PermissionResponse>;

export interface PendingReview {
  key: string;
  sessionId: string;
  toolCallId: string;
  path: string;
  title: string;
  before: vscode.Uri;
  after: vscode.Uri;
  options: PermissionOption[];
  /** The proposal as the server made it; undefined when it could not be worked out (not editable). */
  proposed: string | undefined;
  /** Whether the person's text differs from `proposed`, as last told to listeners. */
  edited: boolean;
  decision: Promise<string>;
  decide(optionId: string): void;
}

/** A pending proposal was edited (or edited back to the proposal). */
export interface EditState {
  sessionId: string;
  toolCallId: string;
  edited: boolean;
}

export class ReviewController implements vscode.Disposable {
  private readonly pending = new Map<string, PendingReview>();
  private readonly editEmitter = new vscode.EventEmitter<EditState>();
  /** Fires when the person's version of a pending proposal starts or stops differing from it. */
  readonly onDidChangeEdits = this.editEmitter.event;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly client: BatonClient,
    private readonly documents: ReviewDocuments,
    private readonly ask: AskPermission,
    private readonly workspaceFolder: () => vscode.WorkspaceFolder | undefined,
    private readonly proposals?: ProposalFiles,
  ) {
    this.subscriptions.push(vscode.workspace.onDidChangeTextDocument((event) => this.noticeEdit(event.document.uri)));
  }

  /** The person's text of a pending proposal when it differs from the proposal, else undefined. */
  editedContent(review: PendingReview): string | undefined {
    if (review.proposed === undefined) return undefined;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === review.after.toString());
    const text = open ? open.getText() : this.proposals?.text(review.after);
    return text !== undefined && text !== review.proposed ? text : undefined;
  }

  private noticeEdit(uri: vscode.Uri): void {
    const review = [...this.pending.values()].find((r) => r.after.toString() === uri.toString());
    if (!review) return;
    const edited = this.editedContent(review) !== undefined;
    if (edited === review.edited) return;
    review.edited = edited;
    this.editEmitter.fire({ sessionId: review.sessionId, toolCallId: review.toolCallId, edited });
  }

  /** An allow answer carries the person's version of the proposal when they changed it. */
  private withEdits(answer: PermissionResponse, review: PendingReview): PermissionResponse {
    if (answer.outcome === "cancelled") return answer;
    const { optionId } = answer.outcome;
    const option = review.options.find((o) => o.optionId === optionId);
    if (!option || option.kind === "reject_once") return answer;
    const editedContent = this.editedContent(review);
    return editedContent === undefined ? answer : { outcome: { optionId, editedContent } };
  }

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
      const fromPrompt = this.ask(params, source.token, { editable: review.proposed !== undefined });
      const fromDiff = review.decision.then((optionId): PermissionResponse => ({ outcome: { optionId } }));
      const answer = await Promise.race([fromPrompt, fromDiff]);
      source.cancel(); // the sidebar card (or the notification's wait) closes
      return this.withEdits(answer, review);
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
      const what = !change.existedBefore ? "created" : !change.existsAfter ? "deleted" : "changed";
      // While the file still holds exactly this change, the right side is the file itself:
      // the diff editor's arrows then undo one hunk at a time (saved like any edit).
      const live = !change.reverted && change.existsAfter && typeof change.after === "string" ? await this.liveFile(change.path, change.after) : undefined;
      if (live) {
        await this.showDiff(pair.before, live, `${change.path}: ${what} by Baton (your file: undo a hunk with its arrow, then save)`);
      } else {
        this.documents.set(pair.after, change.after ?? "");
        await this.showDiff(pair.before, pair.after, `${change.path}: ${what} by Baton${change.reverted ? " (reverted)" : ""}`);
      }
      opened += 1;
    }
    return opened;
  }

  /** The workspace file at `path` when it (or its open editor) holds exactly `after`. */
  private async liveFile(path: string, after: string): Promise<vscode.Uri | undefined> {
    const uri = this.workspaceUri(path);
    if (!uri) return undefined;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const text = open ? open.getText() : await this.readText(uri);
    return text === after ? uri : undefined;
  }

  private async open(params: PermissionRequestParams, diff: string): Promise<PendingReview> {
    const { toolCall } = params;
    const path = toolPath(toolCall.input) ?? toolCall.name;
    const current = await this.readCurrent(path);
    const proposed = proposedContent({ tool: toolCall.name, input: toolCall.input, diff, current });
    const pair = this.documents.pair("proposal", path);
    this.documents.set(pair.before, current ?? "");
    // The proposal is an editable file; should the diff not apply (the file changed
    // meanwhile), the diff itself is shown, read-only.
    const proposals = proposed !== undefined ? this.proposals : undefined;
    const editable = proposals !== undefined;
    const after = proposals ? proposals.uri(pair.key, path) : pair.after;
    if (proposals) proposals.set(after, proposed ?? "");
    else this.documents.set(pair.after, proposed ?? diff);
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
      title: `Baton wants to ${verb} ${path}${params.reason ? " (protected path: always asks)" : ""} (${editable ? "edit the right side to change it; " : ""}Accept ✓ / Reject ✗)`,
      before: pair.before,
      after,
      options: params.options,
      proposed: editable ? proposed : undefined,
      edited: false,
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
    // An edited proposal is saved (to memory) first, so closing its tab asks nothing.
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === review.after.toString());
    if (open?.isDirty) await Promise.resolve(open.save()).catch(() => false);
    const groups = vscode.window.tabGroups;
    const tabs = (groups?.all ?? [])
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === review.after.toString());
    if (tabs.length > 0) await Promise.resolve(groups.close(tabs)).catch(() => undefined);
    this.documents.forget(review.before);
    this.documents.forget(review.after);
    this.proposals?.forget(review.after);
  }

  private async showDiff(before: vscode.Uri, after: vscode.Uri, title: string): Promise<void> {
    const groups = vscode.window.tabGroups;
    const viewColumn = diffColumn(groups?.all ?? [], groups?.activeTabGroup);
    await vscode.commands.executeCommand("vscode.diff", before, after, title, { preview: true, ...(viewColumn ? { viewColumn } : {}) });
  }

  private async updateContext(): Promise<void> {
    const paths = this.pendingReviews.flatMap((r) => [r.before.path, r.after.path]);
    await vscode.commands.executeCommand("setContext", PENDING_CONTEXT, paths);
    await vscode.commands.executeCommand("setContext", "baton.hasPendingReview", paths.length > 0);
  }

  /** The file's text on disk (what the server's diff was computed from); undefined if absent. */
  private async readCurrent(path: string): Promise<string | undefined> {
    const uri = this.workspaceUri(path);
    return uri ? this.readText(uri) : undefined;
  }

  private workspaceUri(path: string): vscode.Uri | undefined {
    const folder = this.workspaceFolder();
    return path.startsWith("/") ? vscode.Uri.file(path) : folder ? vscode.Uri.joinPath(folder.uri, path) : undefined;
  }

  private async readText(uri: vscode.Uri): Promise<string | undefined> {
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
    for (const s of this.subscriptions) s.dispose();
    this.editEmitter.dispose();
  }
}
