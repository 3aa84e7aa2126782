// What the transcript's links and code blocks do: a link opens through VS Code after
// the person saw its full URL; a code block's Copy / Insert.
import * as vscode from "vscode";

/** Copy puts the code on the clipboard; Insert replaces the active editor's selection (or opens a new file). */
export async function codeAction(action: "copy" | "insert", text: string): Promise<void> {
  if (action === "copy") {
    await vscode.env.clipboard.writeText(text);
    void vscode.window.setStatusBarMessage("Baton: code copied", 2000);
    return;
  }
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    const doc = await vscode.workspace.openTextDocument({ content: text });
    await vscode.window.showTextDocument(doc, { preview: false });
    return;
  }
  await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, text);
  });
}

/** Opens a link from a webview through VS Code, after showing the person the full URL. */
export async function openLink(url: string): Promise<void> {
  let uri: vscode.Uri;
  try {
    uri = vscode.Uri.parse(url, true);
  } catch {
    void vscode.window.showWarningMessage(`Baton: not a link that can be opened: ${url}`);
    return;
  }
  if (!["http", "https", "mailto"].includes(uri.scheme)) {
    void vscode.window.showWarningMessage(`Baton: only web and mail links open from the sidebar, not ${uri.scheme}: links.`);
    return;
  }
  const choice = await vscode.window.showInformationMessage(
    "Open this link in your browser?",
    { modal: true, detail: url },
    "Open Link",
  );
  if (choice === "Open Link") await vscode.env.openExternal(uri);
}
