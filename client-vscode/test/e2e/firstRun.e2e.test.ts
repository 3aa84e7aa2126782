// A first run with only OPENAI_BASE_URL set, in real VS Code (code-server) with the real
// server (issue 50, point 2): no key, no model; the welcome lists the models the server
// serves, one click makes it the workspace's model, and the first prompt is answered,
// in this session and in the next.
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";

describe.skipIf(skip)("A first run with only OPENAI_BASE_URL set (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame;
  let failed = false;

  beforeAll(async () => {
    page = await openWorkbench(bench, {
      // The environment names a server and nothing else: no key, no model.
      env: (fake) => ({ OPENAI_BASE_URL: fake.OPENAI_BASE_URL ?? "", OPENAI_API_KEY: "" }),
    });
    await runCommand(page, "Baton: Focus the Prompt Box");
    sidebar = await webviewFrame(page, "#app", 120_000);
    await sidebar.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });
  }, 300_000);

  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-first-run-server.png", failed, sidebar });
  });

  it("picks a model from the server's list in the welcome and sends its first prompt", async () => {
    const models = sidebar.locator("#welcome-models button[data-model]");
    await models.first().waitFor({ timeout: 60_000 });
    expect(await models.allInnerTexts()).toEqual(["gpt-fake", "gpt-fake-mini"]);
    expect(await sidebar.locator("#welcome-model").innerText()).toContain("(OPENAI_BASE_URL). Choose its model for this workspace:");
    await models.first().click();
    // The workspace's model from now on: the welcome says so once the server restarted.
    await sidebar.waitForFunction(
      () => (document.getElementById("welcome-model")?.textContent ?? "").startsWith("Baton will use gpt-fake on the OpenAI-compatible server"),
      undefined,
      { timeout: 120_000 },
    );
    await sidebar.waitForSelector('#app[data-server="running"]', { timeout: 120_000 });
    await typeInto(page, sidebar, "#prompt", "Say hello");
    await sidebar.locator("#send").click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "Hello from the fake model." }).waitFor({ timeout: 120_000 });
    expect(await sidebar.locator(".error-card").count()).toBe(0);

    // A new session uses it too: the model was chosen for the workspace, not the session.
    await runCommand(page, "Baton: New Session");
    await sidebar.waitForFunction(() => document.querySelectorAll("#transcript [data-kind=assistant]").length === 0, undefined, { timeout: 30_000 });
    await typeInto(page, sidebar, "#prompt", "WHICH MODEL answers?");
    await sidebar.locator("#send").click();
    await sidebar.locator("[data-kind=assistant]", { hasText: "model: gpt-fake" }).waitFor({ timeout: 120_000 });
    expect(await sidebar.locator(".error-card").count()).toBe(0);
  }, 400_000);
});
