// Issue 49 in real VS Code (code-server): an edit that breaks a TypeScript file comes
// back with the problems VS Code's own TypeScript service finds (baton/editor/diagnostics,
// answered from vscode.languages.getDiagnostics), and the agent's question is answered in
// the sidebar's card (baton/question/request) with a number key.
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";
const FILES = {
  "counter.ts": "const count: number = 1;\nexport default count;\n",
  // The language service may take a while to start on a loaded machine: the wait is bounded anyway.
  ".baton/config.toml": "[tools]\ndiagnosticsWaitMs = 10000\n",
};

describe.skipIf(skip)("The editor's problems and a question, in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame;

  beforeAll(async () => {
    page = await openWorkbench(bench, { files: FILES });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-editor-tools.png", failed, sidebar });
  });

  async function prompt(text: string): Promise<void> {
    await typeInto(page, sidebar, "#prompt", text);
    await sidebar.locator("#send").click();
  }

  it("an edit that breaks a TypeScript file returns the type error TypeScript reports", async () => {
    // The file open in an editor: TypeScript's service starts on it and checks it.
    await runCommand(page, "Go to File");
    await page.keyboard.type("counter.ts", { delay: 10 });
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "counter.ts" }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press("Enter");
    await page.locator(".monaco-editor .view-lines", { hasText: "const count" }).first().waitFor({ timeout: 30_000 });

    await runCommand(page, "Baton: Focus the Prompt Box");
    sidebar = await webviewFrame(page, "#app", 120_000);
    await sidebar.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
    await prompt("PLEASE BREAK the counter");
    const allow = sidebar.locator(".permission[data-tool=edit] button[data-option-kind=allow_once]");
    await allow.waitFor({ timeout: 60_000 });
    await allow.click();
    // The answer streams: wait for its last line, not its first words.
    const said = sidebar.locator("[data-kind=assistant]", { hasText: "(ts 2322)" });
    await said.waitFor({ timeout: 90_000 });
    const text = await said.innerText();
    expect(text).toContain("The edit said:");
    expect(text).toContain("New problems the editor reports in this file:");
    expect(text).toMatch(/counter\.ts:1: error: Type '(string|"one")' is not assignable to type 'number'\. \(ts 2322\)/);
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
  }, 300_000);

  it("the agent's question is a card in the sidebar, answered with a number key", async () => {
    await prompt("PLEASE ASK which store");
    const card = sidebar.locator(".question");
    await card.waitFor({ timeout: 60_000 });
    expect(await card.locator(".question-text").innerText()).toBe("Which store?");
    expect(await card.locator(".question-option .permission-label").allInnerTexts()).toEqual(["SQLite", "Postgres"]);
    await card.focus();
    await page.keyboard.press("2");
    // The answer streams: wait for the words that end it, not the first ones.
    const said = sidebar.locator("[data-kind=assistant]", { hasText: "The person chose: Postgres" });
    await said.waitFor({ timeout: 60_000 });
    expect(await said.innerText()).toContain("You answered:");
    expect(await sidebar.locator(".question").count()).toBe(0);
  }, 180_000);
});
