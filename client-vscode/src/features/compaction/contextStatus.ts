// Status bar: how much of the context window the active session uses, from the
// server's `usage` updates; clicking it opens the context menu (compact, history, details).
import * as vscode from "vscode";
import type { BatonClient } from "../../client/batonClient";
import type { SessionState, Usage } from "../../state/sessionState";

export function formatUsage(usage: Usage): { text: string; percent: number } {
  const percent = usage.contextWindow > 0 ? Math.round((usage.tokens / usage.contextWindow) * 100) : 0;
  return { text: `$(dashboard) ${percent}%`, percent };
}

export class ContextStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: BatonClient,
    private readonly state: SessionState,
  ) {
    this.item = vscode.window.createStatusBarItem("baton.context", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Baton Context";
    this.item.command = "baton.contextMenu";
    this.disposables.push(
      this.item,
      client.onSessionUpdate(({ sessionId, update }) => {
        if (update.kind === "usage") {
          state.setUsage(sessionId, { tokens: update.tokens, contextWindow: update.contextWindow });
        } else if (update.kind === "compaction_started") {
          state.setCompacting(sessionId, true);
        } else if (update.kind === "compaction_finished") {
          state.setCompacting(sessionId, false);
          const { compaction } = update;
          // The usage after compaction is known from the record; the next usage update refines it.
          const previous = state.usageOf(sessionId);
          if (previous) state.setUsage(sessionId, { ...previous, tokens: compaction.tokensAfter });
        } else if (update.kind === "compaction_failed") {
          state.setCompacting(sessionId, false);
        }
      }),
      state.onDidChangeActive((sessionId) => {
        this.render();
        if (sessionId) void this.seed(sessionId);
      }),
      state.onDidChangeSession((sessionId) => {
        if (sessionId === state.activeSessionId) this.render();
      }),
      client.onDidChangeState(() => this.render()),
    );
    this.render();
  }

  /** Fills in usage for a session that has sent no `usage` update yet. */
  private async seed(sessionId: string): Promise<void> {
    if (this.state.usageOf(sessionId)) return;
    try {
      const context = await this.client.request("baton/session/context", { sessionId });
      if (!this.state.usageOf(sessionId)) {
        this.state.setUsage(sessionId, { tokens: context.tokens, contextWindow: context.contextWindow });
      }
    } catch {
      // No figure yet; the first usage update will bring one.
    }
  }

  render(): void {
    const sessionId = this.state.activeSessionId;
    if (!sessionId || this.client.state !== "running") {
      this.item.hide();
      return;
    }
    const usage = this.state.usageOf(sessionId);
    if (this.state.isCompacting(sessionId)) {
      this.item.text = "$(sync~spin) Compacting…";
      this.item.tooltip = "Baton is compacting the session's context";
      this.item.backgroundColor = undefined;
    } else if (usage) {
      const { text, percent } = formatUsage(usage);
      this.item.text = text;
      this.item.tooltip = `Baton context: ${usage.tokens.toLocaleString("en-US")} of ${usage.contextWindow.toLocaleString("en-US")} tokens (${percent}% of the model's window). Click for compaction and context options.`;
      this.item.backgroundColor =
        percent >= 90
          ? new vscode.ThemeColor("statusBarItem.errorBackground")
          : percent >= 75
            ? new vscode.ThemeColor("statusBarItem.warningBackground")
            : undefined;
    } else {
      this.item.text = "$(dashboard) –";
      this.item.tooltip = "Baton context: no figure yet. Click for compaction and context options.";
      this.item.backgroundColor = undefined;
    }
    this.item.show();
  }

  /** For tests. */
  get statusBarItem(): vscode.StatusBarItem {
    return this.item;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
