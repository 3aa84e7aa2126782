// The sidebar for a day of work (issue 50), each situation in dark, light and high
// contrast, from the real webview bundle in headless Chromium: errors titled by their
// cause, the first run offering the server's models, a message queued while the agent
// works, a child's permission card edited at 300 px, a child's result in words, and a
// step build reopened with its closing line, and a reopened session's retry lines and
// no-op compaction.
// Written to dist/screenshots/day/<situation>-<theme>.png (copied to docs/screenshots/sidebar-day/).
// Run: npm run build && npx vitest run --config vitest.screenshots.config.mts test/screenshots/day.screenshots.ts
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { launchBrowser, openWebview, SCREENSHOTS, send, waitForPosted } from "../webview/harness";

const OUT = path.join(SCREENSHOTS, "day");
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
const SERVER = "openai-compatible (http://localhost:11434/v1)";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
  await mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

async function sidebar(theme: string, width: number, height: number): Promise<Page> {
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

async function session(page: Page, messages: unknown[] = [], running = false): Promise<void> {
  await send(page, { type: "sessions", activeSessionId: SESSION, sessions: [{ sessionId: SESSION, title: "Add a response cache", mode: "build", createdAt: "t", updatedAt: "t" }] });
  await send(page, { type: "history", sessionId: SESSION, title: "Add a response cache", mode: "build", running, messages });
  await send(page, { type: "sessionInfo", sessionId: SESSION, info: { model: "qwen2.5-coder:7b", context: { tokens: 9_000, contextWindow: 32_768 } } });
}

const note = (id: string, body: string) => ({ id, role: "system", createdAt: "t", parts: text(`<baton:step-result>\n${body}\n</baton:step-result>`) });

const SITUATIONS: Record<string, { width?: number; height?: number; arrange: (page: Page) => Promise<void> }> = {
  "errors-by-cause": {
    arrange: async (page) => {
      await session(page);
      for (const [error, cause] of [
        [`${SERVER} returned HTTP 429: slow down (rate_limit_exceeded) (gave up after 4 retries)`, "rate_limit"],
        [`the stream broke after partial output: ${SERVER}: connection failed: RemoteProtocolError: peer closed connection`, "connection_dropped"],
        ['provider "openai-compatible" needs a model: set the `model` key', "model_missing"],
      ]) {
        await send(page, { type: "userMessage", sessionId: SESSION, text: "add the cache" });
        await send(page, update({ kind: "turn_ended", stopReason: "error", error, cause }));
      }
    },
  },
  "first-run-server-models": {
    arrange: async (page) => {
      await send(page, { type: "setup", setup: { hasKey: false, baseUrl: "http://localhost:11434/v1", baseUrlFrom: "environment", serverModels: ["qwen2.5-coder:7b", "llama3.1:8b", "deepseek-coder-v2:16b"] } });
      await send(page, { type: "sessions", activeSessionId: null, sessions: [] });
    },
  },
  "queued-while-working": {
    arrange: async (page) => {
      await session(page, [{ id: "u1", role: "user", createdAt: "t", parts: text("Fix the failing cache tests") }], true);
      await send(page, update({ kind: "agent_message_chunk", text: "Running the tests first." }));
      await send(page, update({ kind: "tool_call", toolCallId: "b1", name: "bash", input: { command: "pytest -q tests/test_cache.py" }, status: "in_progress" }));
      await send(page, update({ kind: "queue", queued: [{ id: "q1", text: "Use pytest -x so it stops at the first failure", delivery: "steer" }, { id: "q2", text: "Then update the changelog", delivery: "after_turn" }] }));
    },
  },
  "edited-child-permission-300px": {
    width: 300,
    height: 560,
    arrange: async (page) => {
      await session(page, [{ id: "u1", role: "user", createdAt: "t", parts: text("build the plan") }], true);
      await send(page, {
        type: "permission",
        requestId: "r1",
        sessionId: "ses_child",
        parentId: SESSION,
        agent: "build",
        toolCall: { toolCallId: "c1", name: "edit", input: { path: "src/http/cache_policy.py", old_string: "ttl = 60", new_string: "ttl = 300" } },
        options: [
          { optionId: "allow_once", kind: "allow_once", name: "Allow" },
          { optionId: "allow_path", kind: "allow_always", name: "Allow", scope: "path" },
          { optionId: "reject_once", kind: "reject_once", name: "Reject" },
        ],
        diff: ["--- a/src/http/cache_policy.py", "+++ b/src/http/cache_policy.py", "@@ -1,3 +1,3 @@", " import time", "-ttl = 60", "+ttl = 300", " cache = {}"].join("\n"),
      });
      await send(page, { type: "permissionEdited", toolCallId: "c1", edited: true });
    },
  },
  "child-result": {
    arrange: async (page) => {
      await session(page, [{ id: "u1", role: "user", createdAt: "t", parts: text("Find the TODOs in src/") }], true);
      await send(page, update({ kind: "tool_call", toolCallId: "t1", name: "task", input: { agent: "explore", description: "Find the TODOs in `src/`", prompt: "p" }, status: "in_progress" }));
      await send(page, update({ kind: "child", callId: "t1", childId: "ses_c1", agent: "explore", description: "Find the TODOs in `src/`", status: "done", tokens: 4210, step: null }));
      const output = ['<baton:task-result agent="explore" child="ses_c1" status="done">', "status: done", "child session: ses_c1", "tokens: 4,210", "files changed: none", "commands run (exit codes, oldest first):", "- `rg -n TODO src` → 0", "final message:", "  Three TODOs: src/cache.py:12 (eviction), src/http.py:40 (retries), src/cli.py:7 (help text).", "</baton:task-result>"].join("\n");
      await send(page, update({ kind: "tool_call_update", toolCallId: "t1", status: "completed", output }));
      await send(page, update({ kind: "turn_ended", stopReason: "end_turn" }));
    },
  },
  "step-build-reopened": {
    arrange: async (page) => {
      await session(page, [
        { id: "u1", role: "user", createdAt: "t", parts: text("Plan the cache, then build it step by step") },
        note("n1", "step 1 of 2 (Add `Cache` to `src/cache.py`): done; child ses_c1; Added Cache with a TTL and an LRU bound."),
        note("n2", "step 2 of 2 (Run the tests in `tests/`): done; child ses_c2; 14 passed."),
      ]);
    },
  },
  "reopened-retries": {
    arrange: async (page) => {
      await session(page);
      const retry = (attempt: number) => ({
        kind: "model_retry", attempt, maxRetries: 4, delaySeconds: 2, status: 429, reason: `${SERVER} returned HTTP 429: slow down (rate_limit_exceeded)`,
      });
      const at = (s: number) => `2026-12-07T10:00:${String(s).padStart(2, "0")}.000Z`;
      // Reopened: the retry lines, the give-up and a compaction that gained nothing, where they were.
      await send(page, {
        type: "history", sessionId: SESSION, title: "Add a response cache", mode: "build", running: false,
        messages: [{ id: "u1", role: "user", createdAt: "t", parts: text("add the cache") }],
        turns: [{ afterMessageId: "u1", stopReason: "error", error: `${SERVER} returned HTTP 429: slow down (rate_limit_exceeded) (gave up after 4 retries)`, cause: "rate_limit", createdAt: at(20) }],
        notices: [
          ...[1, 2, 3, 4].map((n) => ({ afterMessageId: "u1", update: retry(n), createdAt: at(n * 4) })),
          {
            afterMessageId: "u1",
            update: {
              kind: "compaction_finished",
              compaction: {
                compactionId: "", sessionId: SESSION, trigger: "manual", strategy: "native", tokensBefore: 487, tokensAfter: 487, firstKeptMessageId: null,
                ledger: {}, createdAt: "t", notes: ["nothing to compact"], undone: false, committed: false,
              },
            },
            createdAt: at(30),
          },
        ],
      });
    },
  },
};

for (const theme of Object.keys(THEMES)) {
  describe(`sidebar for a day of work, ${theme}`, () => {
    for (const [name, { width, height, arrange }] of Object.entries(SITUATIONS)) {
      it(name, async () => {
        const page = await sidebar(theme, width ?? 340, height ?? 640);
        await arrange(page);
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(OUT, `${name}-${theme}.png`) });
        await page.close();
      });
    }
  });
}
