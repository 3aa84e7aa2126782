// Read-only virtual documents for VS Code's diff editor: the current and the
// proposed content of a file the agent wants to change, and the before/after
// of a change already made. Served under the `baton-review:` scheme; the path
// ends with the file's own path so the editor picks its language.
import * as vscode from "vscode";

export const REVIEW_SCHEME = "baton-review";

export class ReviewDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changeEmitter = new vscode.EventEmitter<vscode.Uri>();
  private counter = 0;
  readonly onDidChange = this.changeEmitter.event;

  /** A fresh pair of URIs (`before`, `after`) for one review of `path`. */
  pair(kind: "proposal" | "change", path: string): { before: vscode.Uri; after: vscode.Uri; key: string } {
    const key = `${kind}-${++this.counter}`;
    const clean = path.replace(/^\/+/, "");
    return {
      key,
      before: vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${key}/before/${clean}` }),
      after: vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${key}/after/${clean}` }),
    };
  }

  set(uri: vscode.Uri, content: string): void {
    this.contents.set(uri.toString(), content);
    this.changeEmitter.fire(uri);
  }

  forget(uri: vscode.Uri): void {
    this.contents.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? "";
  }

  dispose(): void {
    this.contents.clear();
    this.changeEmitter.dispose();
  }
}
