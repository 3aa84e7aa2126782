// VS Code's Workspace Trust, told to the server (docs/security.md): the folder's
// trust goes in `initializationOptions.workspaceTrusted`, and trust granted later
// is sent as `baton/workspace/setTrust` so the server needs no restart. What the
// server ignores meanwhile (`baton/workspace/trust`) is kept here for the sidebar.
import * as vscode from "vscode";
import type { WorkspaceTrustResult } from "../protocol";
import type { TrustView } from "../shell/messages";
import type { BatonClient } from "./batonClient";

export class WorkspaceTrust implements vscode.Disposable {
  private current: TrustView | undefined;
  private readonly emitter = new vscode.EventEmitter<TrustView | undefined>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Fires when the server's trust answer changes (undefined: not known, e.g. while it restarts). */
  readonly onDidChange = this.emitter.event;

  constructor(
    private readonly client: BatonClient,
    private readonly log: (line: string) => void,
  ) {
    this.disposables.push(
      this.emitter,
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.granted()),
      client.onDidChangeState((state) => {
        if (state === "running") void this.refresh();
        else this.set(undefined);
      }),
      client.onSessionUpdate(({ update }) => {
        if (update.kind !== "workspace_trust") return;
        this.set({ trusted: update.trusted, source: update.source, ignored: [...(update.ignored ?? [])], message: update.message });
      }),
    );
  }

  /** VS Code's answer for the folder, as the server's `workspaceTrusted`. */
  static get editorTrusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  get view(): TrustView | undefined {
    return this.current;
  }

  /** Asks the server what it trusts and ignores now. */
  async refresh(): Promise<TrustView | undefined> {
    if (this.client.state !== "running") return this.current;
    try {
      const result = await this.client.request("baton/workspace/trust", {});
      this.set(this.merge(result));
    } catch (error) {
      this.log(`workspace trust: ${String(error)}`);
    }
    return this.current;
  }

  /** The person trusted the folder in VS Code: the running server takes it now. */
  private async granted(): Promise<void> {
    // A server not running yet starts with workspaceTrusted = true anyway.
    if (this.client.state !== "running") return;
    try {
      const result = await this.client.request("baton/workspace/setTrust", { trusted: true });
      this.log(`workspace trusted in VS Code: the server now trusts it (${result.source})`);
      this.set(this.merge(result));
    } catch (error) {
      this.log(`workspace trust: setTrust failed: ${String(error)}`);
    }
  }

  /** Keeps the server's notice while the answer it describes stands. */
  private merge(result: WorkspaceTrustResult): TrustView {
    const view: TrustView = { trusted: result.trusted, source: result.source, ignored: [...(result.ignored ?? [])] };
    if (this.current?.message && !result.trusted && this.current.trusted === result.trusted) view.message = this.current.message;
    return view;
  }

  private set(view: TrustView | undefined): void {
    this.current = view;
    this.emitter.fire(view);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
