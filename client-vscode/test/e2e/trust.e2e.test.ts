// Workspace Trust in real VS Code (code-server): a cloned folder with a command hook
// opens in Restricted Mode; the sidebar says what Baton ignores and offers VS Code's
// Manage Workspace Trust; the person trusts the folder there and, without a restart,
// the folder's hook runs on the next tool call (docs/security.md).
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCommand, typeInto, webviewFrame } from "./codeServer";
import { closeWorkbench, openWorkbench, type Workbench } from "./workbench";

const skip = process.env.BATON_SKIP_VSCODE_E2E === "1";
const MARKER = "hook-ran.txt";
// A repository's own hook: appends a line to MARKER (in the workspace) after every tool call.
const REPO_CONFIG = `[[hooks.toolAfter]]\ncommand = ["sh", "-c", "cat > /dev/null; echo ran >> ${MARKER}"]\n`;

describe.skipIf(skip)("Workspace Trust in real VS Code (code-server)", () => {
  const bench: Workbench = {};
  let page: Page;
  let sidebar: Frame | undefined;

  beforeAll(async () => {
    // The server gets the person's own provider and key (the fake's environment).
    page = await openWorkbench(bench, { restricted: true, files: { ".baton/config.toml": REPO_CONFIG } });
  }, 180_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true;
  });

  afterAll(async () => {
    await closeWorkbench(bench, { screenshot: "vscode-trust.png", failed, sidebar });
  });

  const hookRuns = async () => (await readFile(path.join(bench.server!.workspace, MARKER), "utf8").catch(() => "")).split("\n").filter(Boolean).length;

  async function prompt(frame: Frame, text: string): Promise<void> {
    const answers = await frame.locator("[data-kind=assistant]", { hasText: "I read the readme." }).count();
    await typeInto(page, frame, "#prompt", text);
    await frame.locator("#send").click();
    await frame.waitForFunction(
      (n) => Array.from(document.querySelectorAll("[data-kind=assistant]")).filter((e) => e.textContent?.includes("I read the readme.")).length > n,
      answers,
      { timeout: 90_000 },
    );
    await frame.waitForSelector('#app[data-running="false"]', { timeout: 30_000 });
  }

  it("Restricted Mode: the sidebar lists the ignored hook, the folder's hook does not run; trusted in VS Code, it runs without a restart", async () => {
    await runCommand(page, "Baton: Focus the Prompt Box");
    const frame = await webviewFrame(page, "#app", 120_000);
    sidebar = frame;
    await frame.waitForSelector('#app[data-server="running"]', { timeout: 180_000 });

    // The restriction, in the sidebar: what is ignored, and VS Code's own way to trust.
    const banner = frame.locator("#trust-banner");
    await banner.waitFor({ state: "visible", timeout: 60_000 });
    expect(await frame.locator("#app").getAttribute("data-trusted")).toBe("false");
    expect(await banner.locator(".trust-title").innerText()).toBe("Restricted Mode: this folder is not trusted");
    const ignored = await banner.locator("#trust-ignored li").allInnerTexts();
    expect(ignored.some((item) => item.includes("hooks.toolAfter"))).toBe(true);

    // Untrusted, Baton still answers with the person's provider; the folder's hook stays inert.
    await prompt(frame, "PLEASE READ the readme");
    expect(await hookRuns()).toBe(0);
    // The server said once, plainly, what it ignores and how to trust (window/showMessage).
    await runCommand(page, "Notifications: Show Notifications");
    await page.locator(".notifications-center", { hasText: "This workspace is not trusted" }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press("Escape");

    // Manage Workspace Trust opens VS Code's Workspace Trust editor; the person trusts the folder there.
    const serverStarts = await serverStartCount(1);
    await banner.locator("#trust-manage").click();
    const trustButton = page.locator(".workspace-trust-editor .workspace-trust-buttons .monaco-button").first();
    await trustButton.waitFor({ state: "visible", timeout: 30_000 });
    expect((await trustButton.innerText()).trim()).toMatch(/^Trust/);
    await trustButton.click();
    await page.locator(".workspace-trust-editor", { hasText: "You trust this folder" }).first().waitFor({ timeout: 30_000 });
    // This VS Code shows the Workspace Trust editor as a modal: close it to get back to the sidebar.
    const modal = page.locator(".monaco-modal-editor-block");
    if (await modal.count()) {
      await page.keyboard.press("Escape");
      try {
        await modal.first().waitFor({ state: "detached", timeout: 5_000 });
      } catch {
        await modal.locator('[aria-label^="Close"]').first().click();
        await modal.first().waitFor({ state: "detached", timeout: 15_000 });
      }
    }

    // onDidGrantWorkspaceTrust -> baton/workspace/setTrust: the banner goes, the server keeps running.
    await banner.waitFor({ state: "hidden", timeout: 30_000 });
    expect(await frame.locator("#app").getAttribute("data-trusted")).toBe("true");
    expect(await frame.locator("#app").getAttribute("data-server")).toBe("running");

    await prompt(frame, "PLEASE READ it again");
    expect(await hookRuns()).toBe(1);
    expect(await serverStartCount()).toBe(serverStarts);
  }, 420_000);

  /** How many times the extension started the server, from its output channel's log (waits for `atLeast`). */
  async function serverStartCount(atLeast = 0): Promise<number> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const count = await countStarts();
      if (count >= atLeast || Date.now() > deadline) return count;
      await page.waitForTimeout(500);
    }
  }

  async function countStarts(): Promise<number> {
    const logs = path.join(bench.server!.userDataDir, "logs");
    const { readdir } = await import("node:fs/promises");
    let count = 0;
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.name.includes("Baton Server")) {
          count += ((await readFile(full, "utf8").catch(() => "")).match(/\[client\] starting /g) ?? []).length;
        }
      }
    };
    await walk(logs);
    return count;
  }
});
