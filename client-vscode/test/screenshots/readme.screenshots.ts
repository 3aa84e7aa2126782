// The README's screenshots, taken in real VS Code (code-server, started as the
// real-VS-Code tests start it) with the packaged extension, the repository's
// server and the scripted fake model (test/e2e/fake_llm_server.py): one session
// in plan mode, a plan approved, a change reviewed in the diff editor, a command
// waiting for permission. Each theme gets its own code-server, user-data dir and
// settings file (`workbench.colorTheme` is written before VS Code starts).
//
// Run with `npm run screenshots` (scripts/screenshots.sh builds the .vsix first).
// Writes media/screenshot-{vscode,sidebar,plan,review,sessions}-{dark,light,high-contrast}.png.
// Everything else lives in a temporary folder: the workspace, VS Code's profile,
// Baton's store, HOME; only loopback network.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Browser, Frame, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "../webview/harness";
import { POLITE_FILES } from "../e2e/politeWorkspace";
import {
  CLIENT_ROOT,
  dragSideBar,
  killGroup,
  printDiagnostics,
  REPO_ROOT,
  removeTree,
  runCommand,
  startCodeServer,
  startFakeLlm,
  webviewFrame,
  type CodeServer,
  type FakeLlm,
} from "../e2e/codeServer";

const VSIX = process.env.BATON_SCREENSHOT_VSIX ?? path.join(CLIENT_ROOT, "dist", "baton.vsix");
const MEDIA = process.env.BATON_SCREENSHOT_DIR ?? path.join(CLIENT_ROOT, "media");
const VENV_PYTHON = path.join(REPO_ROOT, ".venv", "bin", "python");

const THEMES = {
  dark: "Default Dark Modern",
  light: "Default Light Modern",
  "high-contrast": "Default High Contrast",
} as const;
const WORKBENCH_CLASS: Record<keyof typeof THEMES, string> = { dark: "vs-dark", light: "vs", "high-contrast": "hc-black" };

const PROMPT = "Make greet() say hello politely, and check it with the tests";

const VIEWPORT = { width: 1280, height: 800 };
const SIDEBAR_WIDTH = 400;
const SIDEBAR_HEIGHT = 1150;

for (const [theme, colorTheme] of Object.entries(THEMES)) {
  describe(`README screenshots, ${theme} theme (${colorTheme})`, () => {
    let llm: FakeLlm | undefined;
    let server: CodeServer | undefined;
    let home: string | undefined;
    let browser: Browser | undefined;
    let page: Page;
    let sidebar: Frame | undefined;
    let failed = false;

    beforeAll(async () => {
      if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run screenshots\` (it packages the extension first)`);
      const python = process.env.BATON_PYTHON ?? (existsSync(VENV_PYTHON) ? VENV_PYTHON : "python3");
      llm = await startFakeLlm(python);
      home = await mkdtemp(path.join(os.tmpdir(), "baton-shots-home-"));
      server = await startCodeServer({
        vsix: VSIX,
        // A throwaway HOME too: nothing of the run lands in the real one.
        env: { ...llm.env, HOME: home },
        // The repository's server (the venv has it installed): no private environment to
        // provision. A machine-overridable setting: code-server reads it from the machine's file.
        machineSettings: { "baton.pythonPath": python },
        settings: {
          "workbench.colorTheme": colorTheme,
          "workbench.preferredDarkColorTheme": THEMES.dark,
          "workbench.preferredLightColorTheme": THEMES.light,
          "window.autoDetectColorScheme": false,
          "workbench.layoutControl.enabled": false,
          "window.commandCenter": false,
          "editor.minimap.enabled": false,
          "workbench.editor.enablePreview": false,
          "explorer.openEditors.visible": 0,
          "git.enabled": false,
          "update.showReleaseNotes": false,
          "workbench.secondarySideBar.defaultVisibility": "hidden",
          "diffEditor.renderSideBySide": true,
          "diffEditor.useInlineViewWhenSpaceIsLimited": false,
        },
        files: POLITE_FILES,
      });
      // Chromium with the throwaway HOME too (it keeps an NSS database and caches there).
      browser = await chromium.launch({
        executablePath: process.env.BATON_CHROMIUM ?? "/usr/bin/chromium",
        args: CHROMIUM_ARGS,
        headless: true,
        env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), XDG_CACHE_HOME: path.join(home, ".cache") },
      });
      page = await browser.newPage({ viewport: VIEWPORT, colorScheme: theme === "light" ? "light" : "dark" });
      await page.goto(server.url);
      await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
      await page.locator(".part.sidebar").first().waitFor({ timeout: 60_000 });
    }, 180_000);

    afterAll(async () => {
      if (failed) await printDiagnostics(server, sidebar);
      await browser?.close();
      killGroup(server?.process);
      if (llm) {
        llm.process.stdin?.end();
        killGroup(llm.process);
      }
      await new Promise((r) => setTimeout(r, 500));
      await removeTree(server?.root);
      await removeTree(home);
    });

    it("a plan waiting for approval, a change in the diff editor, a command waiting for permission", async () => {
      try {
        await mkdir(MEDIA, { recursive: true });
        const shot = (name: string) => path.join(MEDIA, `screenshot-${name}-${theme}.png`);
        const body = page.locator(".monaco-workbench");
        // The theme is the one the settings file asked for, before anything is taken.
        await page.waitForFunction(
          (cls) => document.querySelector(".monaco-workbench")?.classList.contains(cls) === true,
          WORKBENCH_CLASS[theme as keyof typeof THEMES],
          { timeout: 30_000 },
        );

        await runCommand(page, "Baton: Focus the Prompt Box");
        const view = await webviewFrame(page, "#app", 120_000);
        sidebar = view;
        await view.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
        await widenSidebar(page);
        await closePanel(page);

        // Plan mode, then the prompt: the agent reads, writes its plan and asks for approval.
        await view.locator("#mode-plan").click();
        await view.waitForSelector('#app[data-mode="plan"]', { timeout: 30_000 });
        await typePrompt(page, view, PROMPT);
        const plan = await webviewFrame(page, "#plan-app", 90_000);
        await plan.waitForSelector('#plan-app[data-status="awaiting_approval"]', { timeout: 60_000 });
        await view.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
        await view.locator("[data-kind=assistant]", { hasText: "The plan is ready for your review" }).waitFor({ timeout: 30_000 });
        await settle(page);
        await page.locator(".part.editor").screenshot({ path: shot("plan") });

        // Approve: build mode; the agent's edit opens in the diff editor with Accept / Reject.
        await plan.locator("#approve").click();
        const tab = page.locator(".tabs-container .tab", { hasText: "Baton wants to" });
        await tab.first().waitFor({ timeout: 60_000 });
        await view.locator(".permission[data-tool=edit]").waitFor({ timeout: 60_000 });
        await settle(page);
        await body.screenshot({ path: shot("review") });

        // Accept: the step is ticked; the tests ask for permission to run.
        await page.locator(".editor-actions [aria-label^='Accept Change']").first().click();
        await view.locator(".permission[data-tool=bash]").waitFor({ timeout: 60_000 });
        await plan.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "1/2 done", undefined, {
          timeout: 60_000,
        });
        await settle(page);
        await body.screenshot({ path: shot("vscode") });
        // The sidebar alone, taller: the whole session so far, from the prompt on.
        await page.setViewportSize({ ...VIEWPORT, height: SIDEBAR_HEIGHT });
        await settle(page);
        await page.locator(".part.sidebar").screenshot({ path: shot("sidebar") });
        await page.setViewportSize(VIEWPORT);

        // Let the session finish, so the run ends with nothing waiting.
        await view.locator(".permission[data-tool=bash] button.permission-option").first().click();
        await view.locator("[data-kind=assistant]", { hasText: "says hello politely" }).waitFor({ timeout: 60_000 });

        // A second session, then the sessions list: each row's title, mode, tokens, first
        // prompt and last activity.
        await runCommand(page, "Baton: New Session");
        await view.waitForFunction(() => document.getElementById("plan-line")?.hidden === true, undefined, { timeout: 30_000 });
        await view.locator("#mode-build").click();
        await typePrompt(page, view, "Say hello to the new teammate");
        await view.locator("[data-kind=assistant]", { hasText: "Hello from the fake model." }).waitFor({ timeout: 60_000 });
        await view.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
        await runCommand(page, "Baton: Sessions…");
        const rows = page.locator(".quick-input-list .monaco-list-row");
        await rows.nth(2).waitFor({ state: "visible", timeout: 30_000 });
        await settle(page);
        await page.locator(".quick-input-widget").screenshot({ path: shot("sessions") });
        await page.keyboard.press("Escape");
      } catch (error) {
        failed = true;
        throw error;
      }
    }, 300_000);
  });
}

async function typePrompt(page: Page, view: Frame, text: string): Promise<void> {
  await view.locator("#prompt").click();
  await page.keyboard.type(text);
  await view.locator("#send").click();
}

/** The sidebar a little wider than VS Code's default. */
async function widenSidebar(page: Page): Promise<void> {
  const box = await page.locator(".part.sidebar").first().boundingBox();
  if (!box || box.width >= SIDEBAR_WIDTH) return;
  if ((await dragSideBar(page, SIDEBAR_WIDTH)) === box.width) {
    console.warn("screenshots: no sash found at the sidebar's edge; keeping its width");
  }
}

/** No bottom panel, secondary side bar or notifications in the pictures. */
async function closePanel(page: Page): Promise<void> {
  const tryCommand = (title: string) => runCommand(page, title).catch((e: unknown) => console.warn(String(e)));
  if (await page.locator(".part.panel").isVisible().catch(() => false)) await tryCommand("View: Close Panel");
  if (await page.locator(".part.auxiliarybar").isVisible().catch(() => false)) await tryCommand("View: Close Secondary Side Bar");
  await tryCommand("Notifications: Clear All Notifications");
  await page.keyboard.press("Escape");
}

/** Lets streamed text render, animations end and the caret leave the pictures. */
async function settle(page: Page): Promise<void> {
  await page.mouse.move(2, 2);
  await page.waitForTimeout(600);
  for (const toast of await page.locator(".notifications-toasts .notification-toast").all()) {
    await hide(toast);
  }
}

async function hide(locator: Locator): Promise<void> {
  await locator.evaluate((node) => ((node as HTMLElement).style.visibility = "hidden")).catch(() => undefined);
}
