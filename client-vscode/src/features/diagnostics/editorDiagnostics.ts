// The editor's problems for the server (baton/editor/diagnostics): what VS Code's
// language services report, as LSP Diagnostics. A file the server names is opened
// (not shown) first, so a language service that checks open files only (TypeScript)
// looks at it.
import * as vscode from "vscode";
import type { EditorDiagnosticsParams, EditorDiagnosticsResult } from "../../protocol";

export const EDITOR_DIAGNOSTICS = "baton/editor/diagnostics";

export function toLspDiagnostic(d: vscode.Diagnostic): Record<string, unknown> {
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  return {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    // VS Code's DiagnosticSeverity counts from 0 (Error … Hint), LSP's from 1.
    severity: d.severity + 1,
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code } : {}),
  };
}

export async function editorDiagnostics(params: EditorDiagnosticsParams): Promise<EditorDiagnosticsResult> {
  if (!params.uris) {
    return {
      items: vscode.languages
        .getDiagnostics()
        .filter(([, list]) => list.length > 0)
        .map(([uri, list]) => ({ uri: uri.toString(), diagnostics: list.map(toLspDiagnostic) })),
    };
  }
  const items = [];
  for (const raw of params.uris) {
    const uri = vscode.Uri.parse(raw);
    if (uri.scheme !== "file") continue;
    await vscode.workspace.openTextDocument(uri).then(
      () => undefined,
      () => undefined,
    );
    items.push({ uri: raw, diagnostics: vscode.languages.getDiagnostics(uri).map(toLspDiagnostic) });
  }
  return { items };
}

/** Answers the server's requests for as long as the returned disposable lives. */
export function registerEditorDiagnostics(client: {
  onServerRequest<P>(method: string, handler: (params: P) => Promise<unknown>): vscode.Disposable;
}): vscode.Disposable {
  return client.onServerRequest<EditorDiagnosticsParams>(EDITOR_DIAGNOSTICS, (params) => editorDiagnostics(params ?? {}));
}
