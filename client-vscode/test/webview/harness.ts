// Loads the real webview HTML (src/shell/html.ts) and the bundled scripts from
// dist/ into headless Debian Chromium, with acquireVsCodeApi stubbed so the
// test can read what the page posts and post messages to it.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { createNonce, renderWebviewHtml } from "../../src/shell/html";
import { PLAN_BODY } from "../../src/features/plans/planBody";
import { SIDEBAR_BODY } from "../../src/shell/sidebarBody";

export const ORIGIN = "https://webview.baton.test";
const DIST = path.resolve(import.meta.dirname, "../../dist");

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  "--disable-quic",
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.BATON_CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
    headless: true,
  });
}

const STUB = `
  window.__posted = [];
  window.__state = undefined;
  window.__violations = [];
  document.addEventListener("securitypolicyviolation", (e) => {
    window.__violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
  });
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(JSON.parse(JSON.stringify(m))),
    getState: () => window.__state,
    setState: (s) => { window.__state = s; },
  });
`;

/** A dark VS Code theme's variables, so screenshots look like the editor. */
const THEME = `
  :root { --vscode-font-family: system-ui, sans-serif; --vscode-font-size: 13px; --vscode-foreground: #cccccc;
  --vscode-sideBar-background: #181818; --vscode-editor-background: #1f1f1f; --vscode-input-background: #313131;
  --vscode-input-border: #3c3c3c; --vscode-badge-background: #616161; --vscode-badge-foreground: #f8f8f8;
  --vscode-textLink-foreground: #4daafc; --vscode-editor-font-family: monospace; --vscode-focusBorder: #0078d4;
  --vscode-textCodeBlock-background: #2b2b2b; --vscode-panel-border: #2b2b2b; --vscode-dropdown-background: #313131;
  --vscode-dropdown-foreground: #cccccc; --vscode-button-background: #0078d4; --vscode-button-foreground: #ffffff;
  --vscode-button-secondaryBackground: #313131; --vscode-button-secondaryForeground: #cccccc; }
`;

export interface PageOptions {
  /** Extra markup appended to the body, e.g. an injected script without a nonce. */
  extraBody?: string;
  theme?: boolean;
}

export async function openWebview(browser: Browser, name: "sidebar" | "plan", options: PageOptions = {}): Promise<Page> {
  const page = await browser.newPage({ viewport: name === "sidebar" ? { width: 420, height: 760 } : { width: 960, height: 760 } });
  const nonce = createNonce();
  const html = renderWebviewHtml({
    title: name,
    cspSource: ORIGIN,
    nonce,
    scriptUri: `${ORIGIN}/dist/webview/${name}.js`,
    styleUri: `${ORIGIN}/dist/webview/${name}.css`,
    body: (name === "sidebar" ? SIDEBAR_BODY : PLAN_BODY) + (options.extraBody ?? ""),
  });
  await page.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === "/index.html") {
      return route.fulfill({ status: 200, contentType: "text/html", body: html });
    }
    if (url.pathname.startsWith("/dist/")) {
      const file = path.join(DIST, url.pathname.slice("/dist/".length));
      const body = await readFile(file).catch(() => undefined);
      if (!body) return route.fulfill({ status: 404, body: "" });
      const contentType = file.endsWith(".css") ? "text/css" : "text/javascript";
      return route.fulfill({ status: 200, contentType, body });
    }
    if (url.pathname === "/evil.js") {
      return route.fulfill({ status: 200, contentType: "text/javascript", body: "window.__evil = true;" });
    }
    return route.fulfill({ status: 404, body: "" });
  });
  // Anything else (a sanitizer miss loading a remote resource) must not leave the machine.
  await page.route((url) => !url.href.startsWith(ORIGIN), (route) => route.abort());
  await page.addInitScript(STUB);
  await page.goto(`${ORIGIN}/index.html`);
  if (options.theme) await page.addStyleTag({ content: THEME });
  return page;
}

export async function posted(page: Page): Promise<Array<Record<string, unknown>>> {
  return page.evaluate(() => (window as unknown as { __posted: Array<Record<string, unknown>> }).__posted);
}

export async function waitForPosted(page: Page, type: string): Promise<Record<string, unknown>> {
  await page.waitForFunction(
    (t) => (window as unknown as { __posted: Array<{ type: string }> }).__posted.some((m) => m.type === t),
    type,
  );
  const all = await posted(page);
  return all.filter((m) => m.type === type).pop() as Record<string, unknown>;
}

/**
 * Posts `message` as the host would and returns once the page has handled it: a marker posted
 * after it arrives only after every listener has seen `message` (posted messages keep their order),
 * so a check right after `send` never reads the page from before the message.
 */
export async function send(page: Page, message: unknown): Promise<void> {
  await page.evaluate(
    (m) =>
      new Promise<void>((resolve) => {
        const marker = { __handled: Math.random() };
        const onMarker = (event: MessageEvent<unknown>): void => {
          if ((event.data as { __handled?: number } | null)?.__handled !== marker.__handled) return;
          window.removeEventListener("message", onMarker);
          resolve();
        };
        window.addEventListener("message", onMarker);
        window.postMessage(m, "*");
        window.postMessage(marker, "*");
      }),
    message,
  );
}

export const SCREENSHOTS = path.resolve(import.meta.dirname, "../../dist/screenshots");

/** The sidebar at `width` px with one empty session open on `model` of `provider`. */
export async function openSidebarSession(
  browser: Browser,
  { width, provider, model, sessionId = "s-1" }: { width: number; provider: string; model: string; sessionId?: string },
): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width, height: 700 });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  await send(page, {
    type: "sessions",
    activeSessionId: sessionId,
    sessions: [{ sessionId, title: "Work", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  await send(page, { type: "history", sessionId, title: "Work", mode: "build", running: false, messages: [] });
  await send(page, { type: "sessionInfo", sessionId, info: { provider, model } });
  await page.waitForFunction((m) => document.getElementById("pick-model")?.textContent?.includes(m), model);
  return page;
}
