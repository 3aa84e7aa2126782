// Editable in-memory files for the proposed side of a write or edit waiting for a
// decision. Served as a file system (`baton-proposal:`), not as a read-only
// virtual document, so the diff editor lets the person change the proposal: type
// in it, or keep / undo each hunk with the diff editor's own "revert block"
// arrows. What the editor holds when they accept is sent to the server as the
// answer's `editedContent` (reviewController.ts). Nothing here touches the disk.
import * as vscode from "vscode";

export const PROPOSAL_SCHEME = "baton-proposal";

export class ProposalFiles implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  private readonly changeEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changeEmitter.event;

  /** The URI of review `key`'s proposal for `path` (the path keeps the file's language). */
  uri(key: string, path: string): vscode.Uri {
    return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${key}/${path.replace(/^\/+/, "")}` });
  }

  set(uri: vscode.Uri, text: string): void {
    this.files.set(uri.path, { data: new TextEncoder().encode(text), mtime: Date.now() });
    this.changeEmitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  /** The text last saved to `uri` (an open editor may hold newer, unsaved text). */
  text(uri: vscode.Uri): string | undefined {
    const file = this.files.get(uri.path);
    return file ? new TextDecoder("utf-8").decode(file.data) : undefined;
  }

  forget(uri: vscode.Uri): void {
    this.files.delete(uri.path);
  }

  // ------------------------------------------------------------------ FileSystemProvider

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const file = this.files.get(uri.path);
    if (file) return { type: vscode.FileType.File, ctime: file.mtime, mtime: file.mtime, size: file.data.byteLength };
    // Parents of a proposal are directories; anything else does not exist.
    const prefix = uri.path.endsWith("/") ? uri.path : `${uri.path}/`;
    if ([...this.files.keys()].some((p) => p.startsWith(prefix))) return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const file = this.files.get(uri.path);
    if (!file) throw vscode.FileSystemError.FileNotFound(uri);
    return file.data;
  }

  /** Saving the proposal (Ctrl+S) keeps the text here; only a review's own files exist. */
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const file = this.files.get(uri.path);
    if (!file) throw vscode.FileSystemError.NoPermissions(uri);
    this.files.set(uri.path, { data: content, mtime: Date.now() });
    this.changeEmitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(oldUri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(oldUri);
  }

  dispose(): void {
    this.files.clear();
    this.changeEmitter.dispose();
  }
}
