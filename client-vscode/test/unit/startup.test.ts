import { mkdtemp, mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { resolveInterpreter } from "../../src/client/interpreter";
import { prepareLaunch, SERVE_ARGS, type LaunchDeps } from "../../src/client/launch";
import { notifyProblem } from "../../src/client/problemNotifier";
import type { Runner } from "../../src/client/processRunner";
import { describeProblem, StartupError } from "../../src/client/startupError";
import * as vscode from "../mocks/vscode";

function probeOutput(version: number[], baton: string | null): string {
  return `BATON_PROBE${JSON.stringify({ version, executable: "/usr/bin/python3", baton })}\n`;
}

interface Call {
  command: string;
  args: string[];
}

function fakeRunner(script: (call: Call) => { code: number; stdout?: string; stderr?: string } | Error): {
  run: Runner;
  calls: Call[];
} {
  const calls: Call[] = [];
  const run: Runner = async (command, args) => {
    const call = { command, args };
    calls.push(call);
    const outcome = script(call);
    if (outcome instanceof Error) throw outcome;
    return { code: outcome.code, stdout: outcome.stdout ?? "", stderr: outcome.stderr ?? "" };
  };
  return { run, calls };
}

async function deps(run: Runner, options: { wheel?: boolean; pythonPath?: string } = {}): Promise<LaunchDeps & { progress: string[] }> {
  const root = await mkdtemp(path.join(os.tmpdir(), "baton-launch-"));
  const bundledDir = path.join(root, "bundled");
  await mkdir(bundledDir);
  if (options.wheel) await writeFile(path.join(bundledDir, "baton-0.1.0-py3-none-any.whl"), "wheel-bytes");
  const progress: string[] = [];
  return {
    run,
    bundledDir,
    storageDir: path.join(root, "storage"),
    env: { PATH: "/usr/bin" },
    log: () => undefined,
    lookup: { setting: () => options.pythonPath, env: {}, pythonExtension: async () => undefined },
    withProgress: async (title, task) => {
      progress.push(title);
      return task((m) => progress.push(m));
    },
    progress,
  };
}

describe("interpreter choice", () => {
  it("prefers the setting, then the launch configuration, then the Python extension, then python3", async () => {
    const ext = async () => "/ext/python";
    expect(await resolveInterpreter({ setting: () => "/set/python", env: { BATON_DEV_PYTHON: "/dev/python" }, pythonExtension: ext })).toEqual({
      command: "/set/python",
      source: "setting",
    });
    expect((await resolveInterpreter({ setting: () => "", env: { BATON_DEV_PYTHON: "/dev/python" }, pythonExtension: ext })).source).toBe("development");
    expect(await resolveInterpreter({ setting: () => undefined, env: {}, pythonExtension: ext })).toEqual({
      command: "/ext/python",
      source: "python-extension",
    });
    const failing = async () => {
      throw new Error("python extension broke");
    };
    expect(await resolveInterpreter({ setting: () => undefined, env: {}, pythonExtension: failing })).toEqual({
      command: "python3",
      source: "default",
    });
  });

  it("expands ~ in the setting", async () => {
    const r = await resolveInterpreter({ setting: () => "~/venv/bin/python", env: { HOME: "/home/me" }, pythonExtension: async () => undefined });
    expect(r.command).toBe("/home/me/venv/bin/python");
  });
});

describe("start-up problems", () => {
  it("reports a missing interpreter with a fix", async () => {
    const { run } = fakeRunner(() => Object.assign(new Error("spawn nope ENOENT"), { code: "ENOENT" }));
    const error = await prepareLaunch(await deps(run, { pythonPath: "/no/such/python" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    const problem = (error as StartupError).problem;
    expect(problem.kind).toBe("interpreter-not-found");
    const description = describeProblem(problem);
    expect(description.message).toContain("/no/such/python");
    expect(description.message).toContain("baton.pythonPath");
    expect(description.actions.map((a) => a.action)).toContain("openPythonSetting");
  });

  it("refuses Python older than 3.11", async () => {
    const { run } = fakeRunner(() => ({ code: 0, stdout: probeOutput([3, 9, 18], null) }));
    const error = (await prepareLaunch(await deps(run, { wheel: true })).catch((e: unknown) => e)) as StartupError;
    expect(error.problem).toMatchObject({ kind: "python-too-old", version: "3.9.18" });
  });

  it("says how to install baton when it is missing and no wheel is bundled", async () => {
    const { run } = fakeRunner(() => ({ code: 0, stdout: probeOutput([3, 11, 7], null) }));
    const error = (await prepareLaunch(await deps(run)).catch((e: unknown) => e)) as StartupError;
    expect(error.problem.kind).toBe("baton-missing");
    expect(error.message).toContain("pip install");
  });

  it("uses the interpreter directly when it has baton", async () => {
    const { run, calls } = fakeRunner(() => ({ code: 0, stdout: probeOutput([3, 12, 1], "0.1.0") }));
    const plan = await prepareLaunch(await deps(run, { pythonPath: "/opt/py/bin/python" }));
    expect(plan).toMatchObject({ command: "/opt/py/bin/python", args: SERVE_ARGS, provisioned: false });
    expect(calls).toHaveLength(1);
  });

  it("puts BATON_DEV_SERVER_SRC on PYTHONPATH for the Run Extension configuration", async () => {
    const { run } = fakeRunner(() => ({ code: 0, stdout: probeOutput([3, 11, 7], "source") }));
    const d = await deps(run);
    d.env = { BATON_DEV_SERVER_SRC: "/repo/server", PYTHONPATH: "/other" };
    const plan = await prepareLaunch(d);
    expect(plan.env.PYTHONPATH).toBe(`/repo/server${path.delimiter}/other`);
  });
});

describe("private environment", () => {
  function provisioningRunner(options: { offlineFails?: boolean; allFail?: boolean } = {}) {
    return fakeRunner((call) => {
      if (call.args[0] === "-c") return { code: 0, stdout: probeOutput([3, 11, 7], null) };
      if (call.args.includes("venv")) {
        const dir = call.args[call.args.length - 1] as string;
        // Simulate `python -m venv DIR` creating the interpreter.
        return mkdirSyncPython(dir);
      }
      if (call.args.includes("pip")) {
        if (options.allFail) return { code: 1, stderr: "ERROR: No matching distribution found for pydantic" };
        if (options.offlineFails && call.args.includes("--no-index")) return { code: 1, stderr: "no index" };
        return { code: 0 };
      }
      return { code: 1, stderr: "unexpected" };
    });
  }

  it("creates a venv in global storage, installs the bundled wheel offline, with progress, and reuses it", async () => {
    const { run, calls } = provisioningRunner();
    const d = await deps(run, { wheel: true });
    const plan = await prepareLaunch(d);
    expect(plan.provisioned).toBe(true);
    expect(plan.command).toBe(path.join(d.storageDir, "python-env", "bin", "python"));
    const pip = calls.find((c) => c.args.includes("pip"));
    expect(pip?.args).toEqual(expect.arrayContaining(["--no-index", "--find-links", d.bundledDir]));
    expect(d.progress[0]).toBe("Baton: installing its Python server");
    expect(d.progress.some((m) => m.includes("offline"))).toBe(true);

    calls.length = 0;
    const again = await prepareLaunch(d);
    expect(again.command).toBe(plan.command);
    expect(calls.filter((c) => c.args.includes("pip") || c.args.includes("venv"))).toHaveLength(0);
  });

  it("re-provisions when the shipped wheel changes", async () => {
    const { run, calls } = provisioningRunner();
    const d = await deps(run, { wheel: true });
    await prepareLaunch(d);
    await writeFile(path.join(d.bundledDir, "baton-0.1.0-py3-none-any.whl"), "new-wheel-bytes");
    calls.length = 0;
    await prepareLaunch(d);
    expect(calls.some((c) => c.args.includes("venv"))).toBe(true);
  });

  it("falls back to the package index when the offline install fails", async () => {
    const { run, calls } = provisioningRunner({ offlineFails: true });
    const plan = await prepareLaunch(await deps(run, { wheel: true }));
    expect(plan.provisioned).toBe(true);
    const pips = calls.filter((c) => c.args.includes("pip"));
    expect(pips).toHaveLength(2);
    expect(pips[1]?.args).not.toContain("--no-index");
  });

  it("reports a failed installation with the pip error", async () => {
    const { run } = provisioningRunner({ allFail: true });
    const error = (await prepareLaunch(await deps(run, { wheel: true })).catch((e: unknown) => e)) as StartupError;
    expect(error.problem.kind).toBe("provision-failed");
    expect(error.message).toContain("No matching distribution");
  });
});

import { mkdirSync, writeFileSync } from "node:fs";
function mkdirSyncPython(dir: string): { code: number } {
  mkdirSync(path.join(dir, "bin"), { recursive: true });
  writeFileSync(path.join(dir, "bin", "python"), "#!/bin/sh\n");
  return { code: 0 };
}

describe("error notification", () => {
  beforeEach(() => vscode.resetMock());

  it("offers the fix and opens the pythonPath setting", async () => {
    vscode.window.showErrorMessage.mockResolvedValueOnce("Set Python Path");
    const error = new StartupError({ kind: "interpreter-not-found", interpreter: "python3", source: "the default" });
    await notifyProblem(error, { showLog: vi.fn(), restart: vi.fn(async () => undefined) });
    const [message, ...buttons] = vscode.window.showErrorMessage.mock.calls[0] as string[];
    expect(message).toMatch(/Python interpreter "python3".*was not found/);
    expect(buttons).toEqual(["Set Python Path", "Show Log"]);
    expect(vscode.commands.executeCommand).toHaveBeenCalledWith("workbench.action.openSettings", "baton.pythonPath");
  });

  it("Show Log opens the output channel", async () => {
    vscode.window.showErrorMessage.mockResolvedValueOnce("Show Log");
    const showLog = vi.fn();
    await notifyProblem(new StartupError({ kind: "server-failed", interpreter: "p", detail: "exited with 1" }), {
      showLog,
      restart: vi.fn(async () => undefined),
    });
    expect(showLog).toHaveBeenCalled();
  });
});

it("the marker file records the wheel", async () => {
  // Guard against a marker format change that would re-provision on every start.
  const { run } = fakeRunner((call) =>
    call.args[0] === "-c" ? { code: 0, stdout: probeOutput([3, 11, 7], null) } : call.args.includes("venv") ? mkdirSyncPython(call.args[call.args.length - 1] as string) : { code: 0 },
  );
  const d = await deps(run, { wheel: true });
  await prepareLaunch(d);
  const marker = await readFile(path.join(d.storageDir, "python-env", ".baton-wheel"), "utf8");
  expect(marker).toMatch(/^baton-0\.1\.0-py3-none-any\.whl [0-9a-f]{64}\n$/);
});

describe("server that never answers initialize", () => {
  it("fails after the start timeout with a clear message, and disposes the client", async () => {
    const { BatonClient } = await import("../../src/client/batonClient");
    const { fake } = await import("../mocks/languageclient");
    vscode.resetMock();
    fake.reset();
    fake.hangStart = true;
    const reported: unknown[] = [];
    const client = new BatonClient({
      output: vscode.window.createOutputChannel("test") as never,
      prepare: async () => ({
        command: "python3",
        args: ["-m", "baton", "serve"],
        env: {},
        interpreter: { command: "python3", source: "default" },
        provisioned: false,
      }),
      initializationOptions: () => ({}),
      workspaceFolder: () => undefined,
      afterStart: async () => undefined,
      reportProblem: (e) => reported.push(e),
      startTimeoutMs: 50,
    });
    const error = (await client.ensureStarted().catch((e: unknown) => e)) as StartupError;
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toContain('did not answer "initialize" within');
    expect(reported).toEqual([error]);
    expect(client.state).toBe("failed");
    expect(fake.last.dispose).toHaveBeenCalled();
  });
});
