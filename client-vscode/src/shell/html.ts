// The HTML shell of every Baton webview: a strict Content-Security-Policy
// whose only script source is a per-load nonce, one stylesheet and one script
// from dist/. Pure (no vscode import) so the Chromium tests load the very same page.

export interface WebviewPage {
  title: string;
  /** `webview.cspSource`. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce: string;
  /** Initial markup inside <body> (static, no user data). */
  body: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource} 'unsafe-inline'`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

const escapeAttr = (value: string): string =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function renderWebviewHtml(page: WebviewPage): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(contentSecurityPolicy(page.cspSource, page.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(page.styleUri)}">
<title>${escapeAttr(page.title)}</title>
</head>
<body>
${page.body}
<script nonce="${escapeAttr(page.nonce)}" src="${escapeAttr(page.scriptUri)}"></script>
</body>
</html>`;
}

export function createNonce(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = new Uint8Array(32);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}
