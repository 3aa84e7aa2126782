// Editor context for prompts: the selection ("Baton: Add Selection to
// Prompt") and `@path` mentions typed in the prompt box, turned into the
// `context` of baton/session/prompt. The server reads the files itself; the
// text of a buffer is sent only when it has unsaved changes (or no file at
// all), because then the editor, not the disk, holds what the person means.
import * as vscode from "vscode";
import type { ContextAttachment, LineRange } from "../../protocol";
import type { AttachmentRef } from "./messages";

export type { AttachmentRef };

/** The active editor's selection (whole lines), or the whole file when nothing is selected. */
export function selectionAttachment(editor: vscode.TextEditor): AttachmentRef {
  const { document, selection } = editor;
  const name = document.isUntitled ? document.uri.toString() : vscode.workspace.asRelativePath(document.uri, false);
  if (selection.isEmpty) return { uri: document.uri.toString(), label: name };
  let last = selection.end.line;
  if (last > selection.start.line && selection.end.character === 0) last -= 1;
  const range: LineRange = {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
  const lines = last === selection.start.line ? `${last + 1}` : `${selection.start.line + 1}-${last + 1}`;
  return { uri: document.uri.toString(), label: `${name}:${lines}`, range };
}

const MENTION = /(^|\s)@([^\s@]+)/g;
const TRAILING = /[.,;:!?)\]}'"`]+$/;

/** The `@path` tokens of a prompt, trailing punctuation removed, each once. */
export function mentionTokens(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    const token = (match[2] ?? "").replace(TRAILING, "");
    if (token) found.add(token);
  }
  return [...found];
}

/** `context` for baton/session/prompt: the chips, then mentioned files that exist, each once. */
export async function promptContext(
  refs: AttachmentRef[],
  text: string,
  folder: vscode.WorkspaceFolder | undefined,
): Promise<ContextAttachment[]> {
  const out: ContextAttachment[] = [];
  const seen = new Set<string>();
  const add = (uri: string, range?: LineRange) => {
    const key = `${uri}#${JSON.stringify(range ?? null)}`;
    if (seen.has(key)) return;
    seen.add(key);
    const unsaved = unsavedText(uri);
    out.push({ uri, ...(range ? { range } : {}), ...(unsaved !== undefined ? { text: unsaved } : {}) });
  };
  for (const ref of refs) add(ref.uri, ref.range);
  if (folder) {
    for (const token of mentionTokens(text)) {
      const uri = vscode.Uri.joinPath(folder.uri, token);
      if (await isFile(uri)) add(uri.toString());
    }
  }
  return out;
}

function unsavedText(uri: string): string | undefined {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
  return doc && (doc.isDirty || doc.isUntitled) ? doc.getText() : undefined;
}

async function isFile(uri: vscode.Uri): Promise<boolean> {
  try {
    return (await vscode.workspace.fs.stat(uri)).type === vscode.FileType.File;
  } catch {
    return false;
  }
}

const EXCLUDE = "**/{node_modules,.git,.venv,__pycache__,dist,out,.baton}/**";
const CACHE_MS = 10_000;

/** Workspace files for `@` completion, matched against what was typed after the `@`. */
export class FileIndex {
  private files: string[] = [];
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  async search(query: string, limit = 20): Promise<string[]> {
    if (Date.now() - this.loadedAt > CACHE_MS) await this.refresh();
    const q = query.toLowerCase();
    const scored: Array<[number, string]> = [];
    for (const path of this.files) {
      const lower = path.toLowerCase();
      const base = lower.slice(lower.lastIndexOf("/") + 1);
      const score = !q ? 3 : base.startsWith(q) ? 0 : lower.startsWith(q) ? 1 : lower.includes(q) ? 2 : -1;
      if (score >= 0) scored.push([score, path]);
    }
    scored.sort((a, b) => a[0] - b[0] || a[1].length - b[1].length || a[1].localeCompare(b[1]));
    return scored.slice(0, limit).map(([, path]) => path);
  }

  private refresh(): Promise<void> {
    this.loading ??= (async () => {
      try {
        const uris = await vscode.workspace.findFiles("**/*", EXCLUDE, 5000);
        this.files = uris.map((u) => vscode.workspace.asRelativePath(u, false)).sort();
        this.loadedAt = Date.now();
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }
}
