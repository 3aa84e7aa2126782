// Real VS Code (code-server) with the packaged .vsix and the real Python
// server behind it (provisioned by the extension from the wheels inside the
// .vsix), against the scripted fake LLM: run Baton commands from the palette,
// work in the sidebar, open the plan panel, approve, and see the mode change.
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";

describe.skipIf(skip)("Baton in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame;

  beforeAll(async () => {
    // No API key in the environment: the first run has to set one up from the sidebar.
    page = await openWorkbench(bench, { env: ({ OPENAI_API_KEY: _key, ...withoutKey }) => withoutKey });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode.png", failed, sidebar });
  });

  it("first run: the welcome state; Send with no session and no key fails with Set key and Retry; with the key, Retry answers", async () => {
    await runCommand(page, "Baton: Focus the Prompt Box");
    sidebar = await webviewFrame(page, "#app", 120_000);
    await sidebar.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
    await sidebar.locator("#welcome .choice").first().waitFor({ timeout: 30_000 });
    expect(await sidebar.locator("#welcome .choice strong").allInnerTexts()).toEqual([
      "Use a local model",
      "Use an OpenAI API key",
      "Use an OpenAI-compatible server",
    ]);
    expect(await sidebar.locator("#app").getAttribute("data-session-id")).toBe("");
    await typeInto(page, sidebar, "#prompt", "Say hello");
    await page.keyboard.press("Enter");
    // No key, and OPENAI_BASE_URL names a server but no model: the error says so by its
    // cause (not "not fully configured") and offers to choose a model or another server.
    const card = sidebar.locator(".error-card").last();
    await card.waitFor({ timeout: 120_000 });
    expect(await sidebar.locator("#app").getAttribute("data-session-id")).not.toBe("");
    expect(await card.innerText()).toContain("No model is chosen for this server.");
    expect(await card.locator("[data-error-action=chooseModel]").count()).toBe(1);
    expect(await card.locator("[data-error-action=retry]").count()).toBe(1);
    // This person has an OpenAI key for that server instead: set from the palette, it
    // makes the route OpenAI's at that URL, and Retry answers.
    await runCommand(page, "Baton: Set OpenAI API Key");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible", timeout: 30_000 });
    await input.fill(bench.llm!.env.OPENAI_API_KEY ?? "sk-fake");
    await page.keyboard.press("Enter");
    await page.locator(".notifications-toasts", { hasText: "OpenAI API key saved" }).first().waitFor({ timeout: 30_000 });
    await card.locator("[data-error-action=retry]").click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "Hello from the fake model." }).waitFor({ timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
    // The failed attempt stays in the history marked reverted (it changed nothing); the prompt was sent again.
    expect(await sidebar.locator(".msg.user", { hasText: "Say hello" }).count()).toBe(2);
    expect(await sidebar.locator("#app").getAttribute("data-mode")).toBe("build");
  }, 300_000);

  it("a prompt streams the model's answer into the sidebar", async () => {
    await typeInto(page, sidebar, "#prompt", "Say hello");
    await sidebar.locator("#send").click();
    // The first run's answer is already there: wait for this one, the second.
    await sidebar.locator("[data-kind=assistant]", { hasText: "Hello from the fake model." }).nth(1).waitFor({ timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
  }, 90_000);

  it("Baton: Compact Session from the palette compacts and the sidebar shows the result", async () => {
    await runCommand(page, "Baton: Compact Session");
    const marker = sidebar.locator(".marker.compaction");
    await marker.first().waitFor({ timeout: 90_000 });
    expect(await marker.first().innerText()).toMatch(/Context compacted: [\d,]+ → [\d,]+ tokens in use/);
  }, 120_000);

  it("the composer's mode switch, a plan from the agent with checkboxes, Approve: build mode, a tick, and an undo unticks", async () => {
    await sidebar.locator("#mode-plan").click();
    await sidebar.waitForSelector('#app[data-mode="plan"]', { timeout: 30_000 });

    await typeInto(page, sidebar, "#prompt", "PLEASE PLAN a greeting");
    await sidebar.locator("#send").click();

    const plan = await webviewFrame(page, "#plan-app", 90_000);
    await plan.waitForSelector('#plan-app[data-status="awaiting_approval"]', { timeout: 60_000 });
    expect(await plan.locator("#plan-content h1").innerText()).toBe("Plan: greet the world");
    expect(await plan.locator("li.step input.step-box").count()).toBe(2);
    expect(await plan.locator("#plan-progress-label").innerText()).toBe("0/2 done");
    await plan.locator("#approve").click();

    await sidebar.waitForSelector('#app[data-mode="build"]', { timeout: 60_000 });
    await plan.waitForSelector('#plan-app[data-status="approved"], #plan-app[data-status="done"]', { timeout: 60_000 });
    // Baton's order to build is a chip, not the person's message.
    await sidebar.locator(".baton-prompt[data-origin=approval]").waitFor({ timeout: 30_000 });
    // The agent ticks the first step: the checkbox and the progress follow the file.
    await plan.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "1/2 done", undefined, { timeout: 60_000 });
    expect(await plan.locator("li.step").first().getAttribute("data-state")).toBe("done");
    expect(await plan.locator("li.step input.step-box").first().isChecked()).toBe(true);
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    await sidebar.locator("[data-kind=assistant]", { hasText: "Building from the approved plan." }).waitFor({ timeout: 30_000 });
    // Undo the build turn: the plan's tick is taken back with it.
    await sidebar.locator(".baton-prompt[data-origin=approval] + [data-kind=turn-actions] .undo-turn").waitFor({ timeout: 30_000 });
    await sidebar.locator(".baton-prompt[data-origin=approval] + [data-kind=turn-actions] .undo-turn").click();
    const undo = page.locator(".monaco-dialog-box .monaco-button", { hasText: "Undo" }).first();
    await undo.waitFor({ state: "visible", timeout: 30_000 });
    await undo.click();
    await plan.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "0/2 done", undefined, { timeout: 60_000 });
    expect(await plan.locator("li.step input.step-box").first().isChecked()).toBe(false);
  }, 180_000);

  it("Select Model… lists the provider's models; the pick reaches the next request", async () => {
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    // The model picker in the composer.
    await sidebar.locator("#pick-model").click();
    const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "gpt-fake-mini" }).first();
    await row.waitFor({ state: "visible", timeout: 30_000 });
    // Filter and press Enter rather than click: the list animates in, and a click can
    // land while the rows still move. Click the input first: a late update elsewhere
    // (the plan panel, the sidebar) may have taken focus; the picker stays open
    // (ignoreFocusOut) but keys would go there.
    await page.locator(".quick-input-widget input").click();
    await page.keyboard.type("gpt-fake-mini");
    await page.locator(".quick-input-list .monaco-list-row.focused", { hasText: "gpt-fake-mini" }).waitFor({ timeout: 30_000 });
    await page.keyboard.press("Enter");
    await sidebar.waitForFunction(() => document.getElementById("pick-model")?.textContent === "gpt-fake-mini ▾", undefined, {
      timeout: 30_000,
    });
    await typeInto(page, sidebar, "#prompt", "WHICH MODEL");
    await sidebar.locator("#send").click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "model: gpt-fake-mini" }).waitFor({ timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
  }, 120_000);

  it("rename, fork, export and delete (confirmed): the view's title actions", async () => {
    const options = () => sidebar.locator("#session-select option").allInnerTexts();
    // The session actions are icons in the view's title bar, not rows of buttons in the sidebar.
    await page.locator('.part.sidebar [aria-label^="New Session"]').first().waitFor({ timeout: 30_000 });
    await runCommand(page, "Baton: Rename Session…");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible", timeout: 30_000 });
    await input.fill("Greeting work");
    await page.keyboard.press("Enter");
    await sidebar.waitForFunction(
      () => Array.from(document.querySelectorAll("#session-select option")).some((o) => o.textContent === "Greeting work"),
      undefined,
      { timeout: 30_000 },
    );

    await runCommand(page, "Baton: Fork Session");
    await sidebar.waitForFunction(
      () => (document.querySelector("#session-select option:checked")?.textContent ?? "") === "Greeting work (fork)",
      undefined,
      { timeout: 30_000 },
    );
    await sidebar.locator("[data-kind=assistant]", { hasText: "model: gpt-fake-mini" }).waitFor({ timeout: 30_000 });

    await runCommand(page, "Baton: Export Session as Markdown");
    await page.locator(".monaco-editor .view-lines", { hasText: "# Greeting work (fork)" }).first().waitFor({ timeout: 30_000 });

    await runCommand(page, "Baton: Delete Session…");
    const confirm = page.locator(".monaco-dialog-box .monaco-button", { hasText: "Delete" }).first();
    await confirm.waitFor({ state: "visible", timeout: 30_000 });
    await confirm.click();
    await sidebar.waitForFunction(
      () => !Array.from(document.querySelectorAll("#session-select option")).some((o) => o.textContent === "Greeting work (fork)"),
      undefined,
      { timeout: 30_000 },
    );
    expect(await options()).toContain("Greeting work");
  }, 180_000);

  it("a write is shown in the diff editor: Reject leaves the file, Accept writes it; Undo Last Turn's Changes restores it", async () => {
    const readme = path.join(bench.server!.workspace, "README.md");
    const original = await readFile(readme, "utf8");
    await runCommand(page, "Baton: New Session");
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
    await typeInto(page, sidebar, "#prompt", "PLEASE WRITE the readme");
    await sidebar.locator("#send").click();
    // The sidebar asks too: in words, with what "always" grants spelled out.
    const ask = sidebar.locator(".permission").first();
    await ask.waitFor({ timeout: 60_000 });
    expect(await ask.locator(".permission-title").innerText()).toBe("Write README.md?");
    expect(await ask.locator("button.permission-option .permission-label").allInnerTexts()).toEqual([
      "Allow once",
      "Always allow changes to README.md in this session",
      "Always allow every file change in this session",
      "Reject",
    ]);

    // VS Code's diff editor opens on the proposal, with Reject / Accept in its title bar.
    const tab = page.locator(".tabs-container .tab", { hasText: "Baton wants to overwrite README.md" });
    await tab.first().waitFor({ timeout: 60_000 });
    await page.locator(".editor-actions [aria-label^='Reject Change']").first().click();
    await tab.first().waitFor({ state: "detached", timeout: 30_000 });
    expect(await readFile(readme, "utf8")).toBe(original);

    // The agent asks again; Accept writes exactly the proposed content.
    await tab.first().waitFor({ timeout: 60_000 });
    await page.locator(".editor-actions [aria-label^='Accept Change']").first().click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "README.md is rewritten." }).waitFor({ timeout: 60_000 });
    expect(await readFile(readme, "utf8")).toBe("# e2e workspace\n\nRewritten by the agent.\n");
    await sidebar.locator(".tool-card[data-status=completed] .view-change").first().waitFor({ timeout: 30_000 });
    await sidebar.locator("[data-kind=turn-actions] .undo-turn").first().waitFor({ timeout: 30_000 });

    await runCommand(page, "Baton: Undo Last Turn's Changes");
    const undo = page.locator(".monaco-dialog-box .monaco-button", { hasText: "Undo" }).first();
    await undo.waitFor({ state: "visible", timeout: 30_000 });
    await undo.click();
    await sidebar.locator("[data-kind=turn-actions] .reverted-badge").first().waitFor({ timeout: 30_000 });
    expect(await readFile(readme, "utf8")).toBe(original);
  }, 240_000);

  it("permission choices: 'Always allow this command' covers that command only; another asks, Escape rejects it", async () => {
    const ran = path.join(bench.server!.workspace, "ran.txt");
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
    await typeInto(page, sidebar, "#prompt", "PLEASE RUN the commands");
    await sidebar.locator("#send").click();
    const first = sidebar.locator(".permission[data-tool=bash]").first();
    await first.waitFor({ timeout: 60_000 });
    expect(await first.locator(".permission-title").innerText()).toBe("Run this command?");
    expect(await first.locator(".permission-detail").innerText()).toBe("echo one >> ran.txt");
    expect(await first.locator("button.permission-option .permission-label").allInnerTexts()).toEqual([
      "Allow once",
      "Always allow this command in this session",
      "Always allow every command in this session",
      "Reject",
    ]);
    await first.locator("button[data-scope=command]").click();
    // The same command again runs without asking; a different one asks.
    const second = sidebar.locator(".permission[data-tool=bash]", { hasText: "echo two >> ran.txt" });
    await second.waitFor({ timeout: 60_000 });
    expect(await sidebar.locator(".permission").count()).toBe(1);
    expect(await readFile(ran, "utf8")).toBe("one\none\n");
    await sidebar.waitForFunction(() => document.activeElement?.closest(".permission") !== null, undefined, { timeout: 10_000 });
    await page.keyboard.press("Escape");
    await sidebar.locator("[data-kind=assistant]", { hasText: "The commands are done." }).waitFor({ timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
    expect(await readFile(ran, "utf8")).toBe("one\none\n");
    expect(await sidebar.locator(".tool-card[data-tool=bash]").count()).toBeGreaterThanOrEqual(3);
  }, 150_000);

  it("Add Selection to Prompt attaches the selected lines; the model sees them once", async () => {
    await page.keyboard.press("Escape");
    await runCommand(page, "Go to File");
    await page.keyboard.type("README.md", { delay: 10 });
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "README.md" }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press("Enter");
    const editor = page.locator(".monaco-editor .view-lines", { hasText: "# e2e workspace" }).first();
    await editor.waitFor({ timeout: 30_000 });
    await editor.click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Shift+End");
    // Not runCommand: its Escape would clear the editor's selection.
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").waitFor({ state: "visible", timeout: 10_000 });
    await page.keyboard.type("Baton: Add Selection to Prompt", { delay: 10 });
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "Add Selection to Prompt" }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press("Enter");
    await sidebar.locator("#attachments .chip", { hasText: "@README.md:1" }).waitFor({ timeout: 30_000 });
    await typeInto(page, sidebar, "#prompt", "WHAT IS ATTACHED");
    await sidebar.locator("#send").click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "Attached: README.md lines 1-1, seen 1 time(s)." }).waitFor({ timeout: 60_000 });
  }, 120_000);
});
