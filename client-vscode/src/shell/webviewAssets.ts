// Builds a webview's HTML from the bundled assets in dist/.
import * as vscode from "vscode";
import { createNonce, renderWebviewHtml } from "./html";

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, "dist")],
  };
}

export function webviewHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  name: "sidebar" | "plan",
  title: string,
  body: string,
): string {
  const asset = (file: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview", file)).toString();
  return renderWebviewHtml({
    title,
    cspSource: webview.cspSource,
    nonce: createNonce(),
    scriptUri: asset(`${name}.js`),
    styleUri: asset(`${name}.css`),
    body,
  });
}
