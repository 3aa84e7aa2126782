// One real VS Code for a test file: the scripted fake model, code-server with the
// packaged .vsix and the workspace's files, and Chromium on it; closed again with the
// diagnostics of a failure and a screenshot. What was started is kept on the
// `Workbench` as it starts, so a setup that fails half way is still cleaned up.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Frame, Page } from "playwright-core";
import { launchBrowser, SCREENSHOTS } from "../webview/harness";
import {
  basePython,
  CLIENT_ROOT,
  killGroup,
  printDiagnostics,
  removeTree,
  REPO_ROOT,
  startCodeServer,
  startFakeLlm,
  type CodeServer,
  type FakeLlm,
} from "./codeServer";

export const VSIX = path.join(CLIENT_ROOT, "dist", "baton.vsix");

export interface Workbench {
  llm?: FakeLlm;
  server?: CodeServer;
  browser?: Browser;
  page?: Page;
}

export interface WorkbenchOptions {
  /** User settings beside `baton.pythonPath` (the repo's base interpreter). */
  settings?: Record<string, unknown>;
  /** Files to put in the workspace before VS Code opens it. */
  files?: Record<string, string>;
  /** Workspace Trust on, the folder not trusted yet (Restricted Mode). */
  restricted?: boolean;
  /** The server's environment from the fake model's (default: the fake's as it is). */
  env?: (fake: Record<string, string>) => Record<string, string>;
}

/** Starts everything on `bench` and returns the page, the workbench loaded. */
export async function openWorkbench(bench: Workbench, options: WorkbenchOptions = {}): Promise<Page> {
  if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run \`npm run package\` first`);
  const venv = path.join(REPO_ROOT, ".venv", "bin", "python");
  const llm = await startFakeLlm(process.env.BATON_PYTHON ?? (existsSync(venv) ? venv : "python3"));
  bench.llm = llm;
  const server = await startCodeServer({
    vsix: VSIX,
    env: options.env ? options.env(llm.env) : llm.env,
    settings: { "baton.pythonPath": basePython(), ...options.settings },
    restricted: options.restricted,
    files: options.files,
  });
  bench.server = server;
  bench.browser = await launchBrowser();
  const page = await bench.browser.newPage({ viewport: { width: 1400, height: 900 } });
  bench.page = page;
  await page.goto(server.url);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  await page.locator(".explorer-folders-view, .part.sidebar").first().waitFor({ timeout: 60_000 });
  return page;
}

/** Stops what `openWorkbench` started; after a failure first prints the sidebar and the server's log. */
export async function closeWorkbench(
  bench: Workbench,
  { screenshot, failed, sidebar }: { screenshot: string; failed: boolean; sidebar?: Frame },
): Promise<void> {
  if (failed) await printDiagnostics(bench.server, sidebar);
  if (bench.page && process.env.BATON_E2E_SCREENSHOT !== "0") {
    await mkdir(SCREENSHOTS, { recursive: true });
    await bench.page.screenshot({ path: path.join(SCREENSHOTS, screenshot) }).catch(() => undefined);
  }
  await bench.browser?.close();
  killGroup(bench.server?.process);
  if (bench.llm) {
    bench.llm.process.stdin?.end();
    killGroup(bench.llm.process);
  }
  await new Promise((r) => setTimeout(r, 500));
  await removeTree(bench.server?.root);
}
