// Plans in real VS Code (code-server) with the real server and the scripted
// fake model (issue 26): the plan panel's line-by-line review reaches the model
// as one structured message; approving in a fresh context starts the build
// without the planning conversation; the Plans view lists a plan file kept in
// the workspace (docs/plans, as a team would keep it in git), starts a new
// session on it and attaches it to another session.
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";
const SHARED_PLAN = "# Plan: shared greeting\n\n- [x] Draft the greeting\n- [ ] Write `greeting.txt`\n- [ ] Check it\n";

describe.skipIf(skip)("Plans in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame | undefined;

  beforeAll(async () => {
    page = await openWorkbench(bench, {
      settings: { "baton.plans.dir": "docs/plans" },
      files: { "docs/plans/shared-greeting.md": SHARED_PLAN },
    });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-plans.png", failed, sidebar });
  });

  async function prompt(frame: Frame, text: string): Promise<void> {
    await typeInto(page, frame, "#prompt", text);
    await frame.locator("#send").click();
  }

  /** Selects a step's text with a triple click, as a person would, and annotates it from the tools that appear. */
  async function annotate(plan: Frame, step: string, kind: "comment" | "replace" | "delete", words?: string): Promise<void> {
    const before = await plan.locator("#annotation-list li").count();
    await plan.locator("li.step", { hasText: step }).click({ clickCount: 3 });
    await plan.locator("#selection-tools:not([hidden])").waitFor({ timeout: 10_000 });
    await plan.locator(`#selection-tools button[data-kind=${kind}]`).click();
    await plan.locator("#annotation-editor:not([hidden])").waitFor({ timeout: 10_000 });
    if (words) {
      await typeInto(page, plan, "#annotation-text", words);
    }
    await plan.locator("#annotation-save").click();
    await plan.waitForFunction((n) => document.querySelectorAll("#annotation-list li").length === n, before + 1, { timeout: 10_000 });
  }

  it("line-by-line review: two annotations and an overall comment reach the model as one message", async () => {
    await runCommand(page, "Baton: Focus the Prompt Box");
    sidebar = await webviewFrame(page, "#app", 120_000);
    await sidebar.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
    await sidebar.locator("#mode-plan").click();
    await sidebar.waitForSelector('#app[data-mode="plan"]', { timeout: 30_000 });
    await prompt(sidebar, "PLEASE PLAN a greeting");

    const plan = await webviewFrame(page, "#plan-app", 90_000);
    await plan.waitForSelector('#plan-app[data-status="awaiting_approval"]', { timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    // The plan is "# Plan: greet the world", "", "- [ ] Write `hello.txt`", "- [ ] Check it".
    await annotate(plan, "Check it", "comment", "Say what to check: the file's exact text");
    await annotate(plan, "Write hello.txt", "delete");
    expect(await plan.locator("#annotation-list li .annotation-lines").allInnerTexts()).toEqual(["Line 3", "Line 4"]);

    await plan.locator("#request-changes-toggle").click();
    await typeInto(page, plan, "#feedback", "ECHO REVIEW and keep it to one step");
    await plan.locator("#send-feedback").click();

    // The fake model answers with how many user messages the request ends with, and the last one verbatim.
    // The answer streams in: wait for its last line (the overall comment) before reading it,
    // or innerText can catch it mid-stream (two CI runs read it cut after "keep it").
    const answer = sidebar.locator("[data-kind=assistant]", { hasText: "ECHO REVIEW and keep it to one step" }).last();
    await answer.waitFor({ timeout: 90_000 });
    const received = await answer.innerText();
    expect(received).toContain("Review received in 1 message(s)");
    expect(received).toContain("ECHO REVIEW and keep it to one step");
    expect(received).toContain("Check it");
    expect(received).toContain("Say what to check: the file's exact text");
    expect(received).toContain("hello.txt");
    expect(received).toMatch(/comment/i);
    expect(received).toMatch(/delet/i);
    // Sent: the panel let go of the annotations.
    await plan.waitForFunction(() => document.getElementById("review")?.hidden === true, undefined, { timeout: 30_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
  }, 300_000);

  it("Approve and build in a fresh context: the build's requests hold no planning conversation", async () => {
    const plan = await webviewFrame(page, "#plan-app", 30_000);
    await plan.waitForFunction(() => !document.getElementById("approve-fresh")?.hasAttribute("disabled"), undefined, { timeout: 60_000 });
    await plan.locator("#approve-fresh").click();
    await sidebar!.waitForSelector('#app[data-mode="build"]', { timeout: 60_000 });
    await plan.waitForFunction(() => document.getElementById("plan-progress-label")?.textContent === "1/2 done", undefined, { timeout: 90_000 });
    await sidebar!.locator("[data-kind=assistant]", { hasText: "Building from the approved plan in a fresh context." }).waitFor({ timeout: 60_000 });
    await sidebar!.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
  }, 240_000);

  it("the Plans view lists the workspace's plan files; New Session on a Plan carries on with a plan from the folder", async () => {
    const header = page.locator(".part.sidebar .pane-header", { hasText: "Plans" }).first();
    await header.waitFor({ timeout: 30_000 });
    if ((await header.getAttribute("aria-expanded")) !== "true") await header.click();
    const row = page.locator(".part.sidebar .monaco-list-row", { hasText: "shared greeting" }).first();
    await row.waitFor({ timeout: 60_000 });
    expect(await row.innerText()).toContain("1/3 done");
    // The plan the first test wrote is listed too, with the session that wrote it.
    await page.locator(".part.sidebar .monaco-list-row", { hasText: "greet the world" }).first().waitFor({ timeout: 60_000 });

    const sessionsBefore = await sidebar!.locator("#session-select option").count();
    // The row is drawn again as the list refreshes: act on it once its inline action is shown.
    await row.hover();
    const action = row.locator('.action-label[aria-label^="New Session on a Plan"]');
    await action.waitFor({ state: "visible", timeout: 30_000 });
    await row.hover();
    await action.click();
    await sidebar!.waitForFunction((n) => document.querySelectorAll("#session-select option").length === n + 1, sessionsBefore, { timeout: 60_000 });
    // The new session follows the shared plan: the sidebar's plan line shows its progress.
    await sidebar!.waitForFunction(
      () => {
        const line = document.getElementById("plan-line");
        return line !== null && !line.hidden && (line.textContent ?? "").includes("1/3 done");
      },
      undefined,
      { timeout: 60_000 },
    );
    expect(await sidebar!.locator("#plan-line").getAttribute("title")).toContain("docs/plans/shared-greeting.md");
    // The list follows: the shared plan's last session is the new one, the first plan is approved and ticked.
    await page.locator(".part.sidebar .monaco-list-row", { hasText: "Draft · 1/3 done · shared greeting" }).first().waitFor({ timeout: 30_000 });
    await page.locator(".part.sidebar .monaco-list-row", { hasText: "Approved · 1/2 done" }).first().waitFor({ timeout: 30_000 });
  }, 240_000);

  it("Attach a Plan to This Session: a new session without a plan takes the committed plan, picked in the palette", async () => {
    await runCommand(page, "Baton: New Session");
    await sidebar!.waitForFunction(() => document.getElementById("plan-line")?.hidden === true, undefined, { timeout: 30_000 });
    // The new session is loaded once the sidebar has focused its prompt box: a palette
    // opened before that would lose its focus to the sidebar and close.
    await sidebar!
      .waitForFunction(() => document.activeElement?.id === "prompt", undefined, { timeout: 10_000 })
      .catch(() => undefined);
    await runCommand(page, "Baton: Attach a Plan to This Session…");
    const pick = page.locator(".quick-input-list .monaco-list-row", { hasText: "shared greeting" }).first();
    await pick.waitFor({ state: "visible", timeout: 30_000 });
    await page.locator(".quick-input-widget input").click();
    await page.keyboard.type("shared greeting");
    await page.locator(".quick-input-list .monaco-list-row.focused", { hasText: "shared greeting" }).waitFor({ timeout: 30_000 });
    await page.keyboard.press("Enter");
    await page.locator(".notifications-toasts", { hasText: "now follows docs/plans/shared-greeting.md" }).first().waitFor({ timeout: 60_000 });
    await sidebar!.waitForFunction(
      () => {
        const line = document.getElementById("plan-line");
        return line !== null && !line.hidden && (line.textContent ?? "").includes("1/3 done");
      },
      undefined,
      { timeout: 60_000 },
    );
    expect(await sidebar!.locator("#plan-line").getAttribute("title")).toContain("docs/plans/shared-greeting.md");
  }, 180_000);
});
