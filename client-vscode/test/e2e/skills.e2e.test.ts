// Slash commands in real VS Code (code-server) with the real server and the
// scripted fake model: the workspace's skill is offered in the composer's `/`
// menu with its description and argument hint; picked with the keyboard and sent
// with an argument, the model receives the skill's body with the argument in it,
// and the transcript shows what the person typed, the expansion one click away.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, SCREENSHOTS } from "../webview/harness";
import {
  basePython,
  CLIENT_ROOT,
  killGroup,
  printDiagnostics,
  removeTree,
  REPO_ROOT,
  runCommand,
  startCodeServer,
  startFakeLlm,
  typeInto,
  webviewFrame,
  type CodeServer,
  type FakeLlm,
} from "./codeServer";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";
const VSIX = path.join(CLIENT_ROOT, "dist", "baton.vsix");
const SKILL = [
  "---",
  "name: greet-world",
  "description: Greet someone warmly, by name",
  "argument-hint: <name>",
  "---",
  "Greet $ARGUMENTS warmly, then stop.",
  "",
].join("\n");

describe.skipIf(skip)("Slash commands in real VS Code (code-server)", () => {
  let llm: FakeLlm | undefined;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let sidebar: Frame | undefined;

  beforeAll(async () => {
    if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first`);
    const venv = path.join(REPO_ROOT, ".venv", "bin", "python");
    llm = await startFakeLlm(process.env.BATON_PYTHON ?? (existsSync(venv) ? venv : "python3"));
    server = await startCodeServer({
      vsix: VSIX,
      env: llm.env,
      settings: { "baton.pythonPath": basePython() },
      files: { ".baton/skills/greet-world/SKILL.md": SKILL },
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(server.url);
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    await page.locator(".explorer-folders-view, .part.sidebar").first().waitFor({ timeout: 60_000 });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    if (failed) await printDiagnostics(server, sidebar);
    if (page && process.env.BATON_E2E_SCREENSHOT !== "0") {
      await mkdir(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, "vscode-skills.png") }).catch(() => undefined);
    }
    await browser?.close();
    killGroup(server?.process);
    if (llm) {
      llm.process.stdin?.end();
      killGroup(llm.process);
    }
    await new Promise((r) => setTimeout(r, 500));
    await removeTree(server?.root);
  });

  it("types / in the composer, picks the skill from the menu and sends it", async () => {
    await runCommand(page, "Baton: Focus the Prompt Box");
    const frame = await webviewFrame(page, "#app", 120_000);
    sidebar = frame;
    await frame.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });

    await typeInto(page, frame, "#prompt", "/gr");
    const menu = frame.locator("#slash-menu");
    const item = menu.locator("[data-name=greet-world]");
    await item.waitFor({ state: "visible", timeout: 30_000 });
    expect(await item.locator(".slash-hint").innerText()).toBe("<name>");
    expect(await item.locator(".slash-description").innerText()).toBe("Greet someone warmly, by name");
    expect(await menu.locator("[aria-selected=true]").getAttribute("data-name")).toBe("greet-world");
    await page.keyboard.press("Enter");
    await menu.waitFor({ state: "hidden", timeout: 10_000 });
    await frame.waitForFunction(() => (document.querySelector("#prompt") as (Element & { value?: string }) | null)?.value === "/greet-world ");
    await page.keyboard.type("Ada", { delay: 5 });
    await frame.waitForFunction(() => (document.querySelector("#prompt") as (Element & { value?: string }) | null)?.value === "/greet-world Ada");
    await page.keyboard.press("Enter");

    const answer = frame.locator("[data-kind=assistant]", { hasText: "Skill greet-world said:" });
    await answer.waitFor({ timeout: 90_000 });
    expect(await answer.innerText()).toContain("Skill greet-world said: Greet Ada warmly, then stop.");
    await frame.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
    // Live, before any reload: one message, as typed, with what the agent was sent one click away.
    const sent = frame.locator(".msg.command");
    expect(await frame.locator("[data-kind=user]").count()).toBe(1);
    expect(await sent.locator(".command-typed").innerText()).toBe("/greet-world Ada");
    await sent.locator(".command-expanded summary").click();
    expect(await sent.locator(".command-expanded-body").innerText()).toContain("Greet Ada warmly, then stop.");
  }, 300_000);
});
