// Permission prompts (baton/permission/request) asked of the person: as a card in the
// sidebar when it shows, else as a modal dialog that shows the whole request. The
// card's answer comes back as the webview's `permissionAnswer`.
import * as vscode from "vscode";
import type { PermissionRequestParams, PermissionResponse } from "../../protocol";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";
import type { SidebarHost } from "../../shell/sidebarHost";
import { visibleText } from "../../util/visible";
import { childAsker } from "../children/childMessages";

export class PermissionPrompts implements vscode.Disposable {
  private readonly pending = new Map<string, (response: PermissionResponse) => void>();
  private requestCounter = 0;

  constructor(
    private readonly host: Pick<SidebarHost, "post" | "isVisible" | "reveal">,
    /** A child session in words, for a child's request. */
    private readonly describeChild: (sessionId: string) => string | undefined = () => undefined,
  ) {}

  /** Answers in the sidebar when it is showing, else in a dialog. */
  async ask(
    params: PermissionRequestParams,
    token: vscode.CancellationToken,
    /** `editable`: its proposal is open for editing in the diff editor, which a modal dialog would block. */
    options: { editable?: boolean } = {},
  ): Promise<PermissionResponse> {
    if (!this.host.isVisible && options.editable) {
      // The person may want to edit the proposal before answering: ask in the card, not a modal.
      await this.host.reveal();
      if (token.isCancellationRequested) return { outcome: "cancelled" };
    }
    if (!this.host.isVisible) {
      const answer = await askInDialog(params, token, this.describeChild(params.sessionId));
      if (answer !== "sidebar") return answer;
      // Too long for a dialog: shown whole in the sidebar's card instead.
      await this.host.reveal();
      if (token.isCancellationRequested) return { outcome: "cancelled" };
      if (!this.host.isVisible) return { outcome: "cancelled" };
    }
    const requestId = `perm-${++this.requestCounter}`;
    return new Promise<PermissionResponse>((resolve) => {
      const finish = (response: PermissionResponse) => {
        if (!this.pending.delete(requestId)) return;
        subscription.dispose();
        this.host.post({ type: "permissionClosed", requestId });
        resolve(response);
      };
      const subscription = token.onCancellationRequested(() => finish({ outcome: "cancelled" }));
      this.pending.set(requestId, finish);
      this.host.post({
        type: "permission",
        requestId,
        sessionId: params.sessionId,
        toolCall: params.toolCall,
        options: params.options,
        ...(params.diff ? { diff: params.diff } : {}),
        ...(params.reason ? { reason: params.reason } : {}),
        ...childFields(params),
      });
    });
  }

  /** The card's answer; an unknown or already answered request changes nothing. */
  answer(requestId: string, optionId: string): void {
    this.pending.get(requestId)?.({ outcome: { optionId } });
  }

  /** The person edited a pending proposal in the diff editor (or edited it back): the card says
   * whether allowing writes their version. */
  edited(state: { toolCallId: string; edited: boolean }): void {
    this.host.post({ type: "permissionEdited", toolCallId: state.toolCallId, edited: state.edited });
  }

  /** The sidebar messages this feature owns. */
  register(registry: MessageRegistry): Registration[] {
    return [registry.on("permissionAnswer", (message) => this.answer(message.requestId, message.optionId))];
  }

  dispose(): void {
    for (const finish of [...this.pending.values()]) finish({ outcome: "cancelled" });
    this.pending.clear();
  }
}

/** A child's request carries its parent and agent: the sidebar says which child asks. */
function childFields(params: PermissionRequestParams): { parentId?: string; agent?: string } {
  const asker = childAsker(params);
  return asker ? { parentId: asker.parentId, agent: asker.agent } : {};
}

/** The most a dialog shows; a longer request is shown in the sidebar's card. */
export const DIALOG_LIMIT = { chars: 2_000, lines: 40 };

/**
 * Asks in a modal dialog whose detail is the whole request, escaped (src/util/visible.ts):
 * a toast would cut a long command and render control characters. A request too long for
 * a dialog offers only "Show in Sidebar" or Reject, so nothing unseen can be allowed.
 */
async function askInDialog(
  params: PermissionRequestParams,
  token: vscode.CancellationToken,
  /** Which child asks, when a child's tool does and its parent told of it. */
  child?: string,
): Promise<PermissionResponse | "sidebar"> {
  const labels: Record<string, string> = {
    allow_once: "Allow once",
    allow_always: "Always allow",
    reject_once: "Reject",
  };
  const { name, input } = params.toolCall;
  const full = typeof input.command === "string" ? input.command : JSON.stringify(input, null, 2);
  const shown = visibleText(full) + (params.diff ? `\n\n${visibleText(params.diff, false)}` : "");
  const tooLong = shown.length > DIALOG_LIMIT.chars || shown.split("\n").length > DIALOG_LIMIT.lines;
  type Item = vscode.MessageItem & { optionId?: string; sidebar?: boolean };
  const items: Item[] = tooLong
    ? [{ title: "Show in Sidebar", sidebar: true }, ...params.options.filter((o) => o.kind === "reject_once").map((o) => ({ title: o.name ?? "Reject", optionId: o.optionId }))]
    : params.options.map((o) => ({ title: o.name ?? labels[o.kind] ?? o.kind, optionId: o.optionId }));
  const detail = tooLong
    ? `${shown.slice(0, 500)}\n[… ${(shown.length - 500).toLocaleString("en-US")} more characters not shown here: open it in the sidebar to read all of it before you decide]`
    : shown;
  const asker = childAsker(params);
  const who = asker ? `the ${visibleText(child ?? `${asker.agent || "task"} child`)} of a session` : "the agent";
  const answer = await Promise.race([
    vscode.window.showWarningMessage(
      `Baton: ${who} wants to run ${visibleText(name)}${params.reason ? ` (${visibleText(params.reason)})` : ""}`,
      { modal: true, detail },
      ...items,
    ),
    new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined))),
  ]);
  if (answer?.sidebar) return "sidebar";
  return answer?.optionId ? { outcome: { optionId: answer.optionId } } : { outcome: "cancelled" };
}

