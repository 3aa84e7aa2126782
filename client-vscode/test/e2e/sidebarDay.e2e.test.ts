// The sidebar for a day of work, in real VS Code (code-server) with the real server and
// the scripted fake model behind an OpenAI-compatible provider (issue 50): a 429 that
// gave up and a stream that dropped are titled by their cause, not "not fully
// configured"; and a message typed while the agent works is queued and reaches the
// model at the turn's next step.
import { existsSync } from "node:fs";
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";

describe.skipIf(skip)("The sidebar for a day of work in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame;
  let failed = false;

  beforeAll(async () => {
    // The fake model as an OpenAI-compatible server (Ollama, LM Studio, vLLM…).
    page = await openWorkbench(bench, {
      settings: { "baton.provider": "openai-compatible", "baton.model": "gpt-fake" },
      // The step build's children write without asking (their permission cards are another test's).
      env: (fake) => ({ ...fake, BATON_PERMISSIONS__WRITE: "allow" }),
    });
    await runCommand(page, "Baton: Focus the Prompt Box");
    sidebar = await webviewFrame(page, "#app", 120_000);
    await sidebar.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
  }, 300_000);

  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-sidebar-day.png", failed, sidebar });
  });

  async function prompt(text: string): Promise<void> {
    await typeInto(page, sidebar, "#prompt", text);
    await sidebar.locator("#send").click();
  }

  it("a 429 that gave up and a dropped stream are titled by their cause", async () => {
    await prompt("PLEASE RATE LIMIT");
    const limited = sidebar.locator(".error-card").last();
    await limited.waitFor({ timeout: 120_000 });
    expect(await limited.getAttribute("data-cause")).toBe("rate_limit");
    expect(await limited.locator(".error-title").innerText()).toBe(
      "The model server is rate-limiting requests. Baton retried 4 times. Wait a moment, then retry.",
    );
    expect(await limited.locator("button").allInnerTexts()).toEqual(["Retry", "Show log"]);
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });

    await prompt("PLEASE DROP the connection");
    const dropped = sidebar.locator('.error-card[data-cause="connection_dropped"]');
    await dropped.waitFor({ timeout: 120_000 });
    expect(await dropped.locator(".error-title").innerText()).toBe(
      "The connection to the model server dropped mid-answer. The partial answer is kept; retry to ask again.",
    );
    expect(await sidebar.locator("#transcript").innerText()).not.toContain("not fully configured");
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
  }, 300_000);

  it("a message typed while the agent works is queued and reaches the model at the next step", async () => {
    await prompt("PLEASE STEER while you read");
    await sidebar.waitForSelector('#app[data-running="true"]', { timeout: 60_000 });
    await sidebar.locator("[data-kind=assistant]", { hasText: "Reading the readme slowly" }).waitFor({ timeout: 60_000 });
    // Enter during the turn queues (it did nothing before).
    await typeInto(page, sidebar, "#prompt", "Answer in French");
    expect((await sidebar.locator("#send").innerText()).trim()).toBe("Queue");
    await sidebar.locator("#send").click();
    await sidebar.locator(".queued-item", { hasText: "Answer in French" }).waitFor({ timeout: 30_000 });
    // Delivered at the step after the read: the model's next request ends with it.
    await sidebar.locator("[data-kind=assistant]", { hasText: "Steered by: Answer in French" }).waitFor({ timeout: 120_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    expect(await sidebar.locator(".queued-item").count()).toBe(0);
    expect(await sidebar.locator('.msg.user[data-queued="steer"]').innerText()).toContain("Answer in French");
  }, 300_000);

  it("a step build's cards are there after Reload Window, and Undo of the whole build restores its files", async () => {
    await runCommand(page, "Baton: New Session");
    // Plan applies to the session shown: wait for the new one (no answers yet), as a
    // person would see it, or the click lands on the session before it.
    await sidebar.waitForFunction(() => document.querySelectorAll("#transcript [data-kind=assistant]").length === 0, undefined, { timeout: 30_000 });
    await sidebar.locator("#mode-plan").click();
    await sidebar.waitForSelector('#app[data-mode="plan"]', { timeout: 30_000 });
    await prompt("PLEASE PLAN a greeting");
    const plan = await webviewFrame(page, "#plan-app", 90_000);
    await plan.waitForSelector('#plan-app[data-status="awaiting_approval"]', { timeout: 60_000 });
    await sidebar.waitForSelector('#app[data-running="false"]', { timeout: 60_000 });
    await runCommand(page, "Baton: Approve Plan and Build Step by Step");
    const ended = sidebar.locator("[data-kind=build-ended] .build-ended-text");
    await ended.waitFor({ timeout: 180_000 });
    expect(await ended.innerText()).toBe("The step-by-step build ended: all 2 steps built.");
    const workspace = bench.server!.workspace;
    expect(existsSync(path.join(workspace, "step1.txt")) && existsSync(path.join(workspace, "step2.txt"))).toBe(true);

    await runCommand(page, "Developer: Reload Window");
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    await page.waitForTimeout(2_000);
    await runCommand(page, "Baton: Focus the Prompt Box");
    sidebar = await webviewFrame(page, "#app", 120_000);
    const cards = sidebar.locator(".child-card");
    await cards.nth(1).waitFor({ timeout: 60_000 });
    expect(await cards.locator(".child-step").allInnerTexts()).toEqual(["Step 1 of 2", "Step 2 of 2"]);
    expect(await cards.locator(".child-summary-answer").allInnerTexts()).toEqual(["Built step 1.", "Built step 2."]);
    await sidebar.locator("[data-kind=build-ended] .build-undo").click();
    const undo = page.locator(".monaco-dialog-box .monaco-button", { hasText: "Undo" }).first();
    await undo.waitFor({ state: "visible", timeout: 30_000 });
    await undo.click();
    await expect.poll(() => existsSync(path.join(workspace, "step1.txt")) || existsSync(path.join(workspace, "step2.txt")), { timeout: 60_000 }).toBe(false);
  }, 400_000);
});
