// The sidebar's everyday situations, each in dark, light and high contrast, from the
// real webview bundle in headless Chromium (no code-server needed), one or more for each
// point of issue 39: a reopened session (1), an edited proposal (2), the write prompt
// (3), a retry countdown and error titles (4), the first run (5), a retry in place (6),
// the composer at 300 px (7), tool output (8), the plan line (9) and the context meter
// (10). The sessions list (11) is VS Code's quick pick: readme.screenshots.ts takes it.
// Written to dist/screenshots/situations/<situation>-<theme>.png.
// Run: npm run build && npx vitest run --config vitest.screenshots.config.mts test/screenshots/situations.screenshots.ts
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { launchBrowser, openWebview, SCREENSHOTS, send, waitForPosted } from "../webview/harness";

const OUT = path.join(SCREENSHOTS, "situations");
const SESSION = "s-1";

const THEMES: Record<string, { body: string; vars: string }> = {
  dark: { body: "vscode-dark", vars: "" },
  light: {
    body: "vscode-light",
    vars: `:root { --vscode-foreground: #3b3b3b; --vscode-sideBar-background: #f8f8f8; --vscode-editor-background: #ffffff;
      --vscode-input-background: #ffffff; --vscode-input-border: #cecece; --vscode-textCodeBlock-background: #f0f0f0;
      --vscode-button-background: #005fb8; --vscode-button-foreground: #ffffff; --vscode-button-secondaryBackground: #e5e5e5;
      --vscode-button-secondaryForeground: #3b3b3b; --vscode-panel-border: #e5e5e5; --vscode-textLink-foreground: #005fb8; }
      body { background: #f8f8f8; color: #3b3b3b; }`,
  },
  "high-contrast": {
    body: "vscode-high-contrast",
    vars: `:root { --vscode-foreground: #ffffff; --vscode-sideBar-background: #000000; --vscode-editor-background: #000000;
      --vscode-input-background: #000000; --vscode-input-border: #6fc3df; --vscode-contrastBorder: #6fc3df;
      --vscode-contrastActiveBorder: #f38518; --vscode-button-background: transparent; --vscode-button-foreground: #ffffff;
      --vscode-button-secondaryBackground: transparent; --vscode-button-border: #6fc3df; --vscode-panel-border: #6fc3df; }
      body { background: #000000; color: #ffffff; }`,
  },
};

const text = (t: string) => [{ type: "text", text: t }];
const update = (u: Record<string, unknown>) => ({ type: "update", sessionId: SESSION, update: u });

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
  await mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

async function sidebar(theme: string, width = 340, height = 640): Promise<Page> {
  const page = await openWebview(browser, "sidebar", { theme: true });
  await page.setViewportSize({ width, height });
  const look = THEMES[theme]!;
  await page.evaluate((cls) => {
    document.body.className = cls;
  }, look.body);
  if (look.vars) await page.addStyleTag({ content: look.vars });
  await waitForPosted(page, "ready");
  await send(page, { type: "server", status: "running" });
  return page;
}

async function session(page: Page, messages: unknown[] = [], turns: unknown[] = []): Promise<void> {
  await send(page, {
    type: "sessions",
    activeSessionId: SESSION,
    sessions: [{ sessionId: SESSION, title: "Add a response cache", mode: "build", createdAt: "t", updatedAt: "t" }],
  });
  await send(page, { type: "history", sessionId: SESSION, title: "Add a response cache", mode: "build", running: false, messages, turns });
  await send(page, { type: "sessionInfo", sessionId: SESSION, info: { model: "gpt-5.1", context: { tokens: 0, contextWindow: 400_000 } } });
}

const SITUATIONS: Record<string, (page: Page) => Promise<void>> = {
  "reopened-session": async (page) => {
    await session(
      page,
      [
        { id: "u1", role: "user", createdAt: "t", parts: text("Add a cache to the client") },
        { id: "a1", role: "assistant", createdAt: "t", parts: text("Half an ans") },
        { id: "c1", role: "system", createdAt: "t", parts: [{ type: "compaction", compactionId: "c", trigger: "auto", tokensBefore: 91_000, tokensAfter: 12_400 }] },
        { id: "u2", role: "user", createdAt: "t", parts: text("go on") },
      ],
      [
        { afterMessageId: "a1", stopReason: "cancelled", createdAt: "t" },
        { afterMessageId: "u2", stopReason: "error", error: "api.openai.com returned HTTP 429: Rate limit (gave up after 4 retries)", createdAt: "t" },
      ],
    );
  },
  "write-prompt": async (page) => {
    await session(page, [{ id: "u1", role: "user", createdAt: "t", parts: text("write the cache") }]);
    await send(page, {
      type: "permission",
      requestId: "r1",
      toolCall: { toolCallId: "c1", name: "write", input: { path: "src/cache.py", content: "x" } },
      options: [
        { optionId: "allow_once", kind: "allow_once", name: "Allow" },
        { optionId: "allow_always", kind: "allow_always", name: "Allow writes this session" },
        { optionId: "reject_once", kind: "reject_once", name: "Reject" },
      ],
      diff: ["--- a/src/cache.py", "+++ b/src/cache.py", ...Array.from({ length: 120 }, (_, i) => `+line ${i}`)].join("\n"),
    });
  },
  "edited-proposal": async (page) => {
    await session(page, [{ id: "u1", role: "user", createdAt: "t", parts: text("tidy the cache") }]);
    await send(page, {
      type: "permission",
      requestId: "r1",
      toolCall: { toolCallId: "c1", name: "edit", input: { path: "src/cache.py", old_string: "ttl = 60", new_string: "ttl = 300" } },
      options: [
        { optionId: "allow_once", kind: "allow_once", name: "Allow" },
        { optionId: "allow_always", kind: "allow_always", name: "Allow writes this session" },
        { optionId: "reject_once", kind: "reject_once", name: "Reject" },
      ],
      diff: ["--- a/src/cache.py", "+++ b/src/cache.py", "@@ -1,3 +1,3 @@", " import time", "-ttl = 60", "+ttl = 300", " cache = {}"].join("\n"),
    });
    // The person kept one hunk and changed the value in the diff editor.
    await send(page, { type: "permissionEdited", toolCallId: "c1", edited: true });
  },
  "retry-countdown": async (page) => {
    await session(page);
    await send(page, { type: "userMessage", sessionId: SESSION, text: "hello" });
    await send(page, update({ kind: "model_retry", attempt: 1, maxRetries: 4, delaySeconds: 1, reason: "HTTP 503", status: 503 }));
    await send(page, update({ kind: "model_retry", attempt: 2, maxRetries: 4, delaySeconds: 8, reason: "HTTP 429", status: 429 }));
  },
  "error-titles": async (page) => {
    await session(page);
    for (const error of [
      "the stream broke after partial output: peer closed connection",
      "api.openai.com returned HTTP 400: context_length_exceeded",
      "api.openai.com returned HTTP 400: flagged by content_filter",
    ]) {
      await send(page, { type: "userMessage", sessionId: SESSION, text: "try" });
      await send(page, update({ kind: "turn_ended", stopReason: "error", error }));
    }
  },
  "first-run": async (page) => {
    await send(page, { type: "setup", setup: { hasKey: false, baseUrl: "http://localhost:11434/v1", baseUrlFrom: "environment" } });
    await send(page, { type: "sessions", activeSessionId: null, sessions: [] });
  },
  "retry-in-place": async (page) => {
    await session(
      page,
      [
        { id: "u1", role: "user", createdAt: "t", reverted: true, parts: text("add a cache") },
        { id: "a1", role: "assistant", createdAt: "t", reverted: true, parts: text("Half") },
        { id: "u2", role: "user", createdAt: "t", parts: text("add a cache") },
        { id: "a2", role: "assistant", createdAt: "t", parts: text("Done: the cache is in.") },
      ],
      [{ afterMessageId: "a1", stopReason: "error", error: "the stream broke after partial output", createdAt: "t" }],
    );
  },
  "composer-300px": async (page) => {
    await page.setViewportSize({ width: 300, height: 640 });
    await session(page);
    await send(page, { type: "userMessage", sessionId: SESSION, text: "run the tests" });
  },
  "tool-output": async (page) => {
    await session(page);
    await send(page, update({ kind: "tool_call", toolCallId: "t1", name: "bash", input: { command: "pytest -q" }, status: "pending" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "t1", status: "completed", output: [`${"F".repeat(200)}`, "2 failed", ...Array.from({ length: 30 }, (_, i) => `line ${i}`)].join("\n") }));
    await send(page, update({ kind: "tool_call", toolCallId: "t2", name: "plan_edit", input: {}, status: "pending" }));
    await send(page, update({ kind: "tool_call_update", toolCallId: "t2", status: "completed", output: "Plan v3 (approved). Changed lines:\n-6| - [ ] Add median()\n+6| - [x] Add median()" }));
  },
  "plan-line": async (page) => {
    await session(page);
    await send(page, {
      type: "sessionInfo",
      sessionId: SESSION,
      info: { model: "gpt-5.1", context: { tokens: 180_000, contextWindow: 400_000 }, plan: { path: ".baton/plans/cache.md", status: "approved", version: 3, done: 5, total: 5 } },
    });
  },
  "meter-at-zero": async (page) => {
    await session(page);
  },
};

for (const theme of Object.keys(THEMES)) {
  describe(`sidebar situations, ${theme}`, () => {
    for (const [name, arrange] of Object.entries(SITUATIONS)) {
      it(name, async () => {
        const page = await sidebar(theme);
        await arrange(page);
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(OUT, `${name}-${theme}.png`) });
        await page.close();
      });
    }
  });
}
