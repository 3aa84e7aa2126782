// The sidebar for a day of work, in real VS Code (code-server) with the real server and
// the scripted fake model behind an OpenAI-compatible provider (issue 50): a 429 that
// gave up and a stream that dropped are titled by their cause, not "not fully
// configured"; and a message typed while the agent works is queued and reaches the
// model at the turn's next step.
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
    page = await openWorkbench(bench, { settings: { "baton.provider": "openai-compatible", "baton.model": "gpt-fake" } });
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
});
