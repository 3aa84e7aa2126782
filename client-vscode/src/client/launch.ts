// Decides how to start the server: which interpreter, whether Baton must first
// be provisioned into the private environment, and with what environment.
import path from "node:path";
import { describeSource, resolveInterpreter, type Interpreter, type InterpreterLookup } from "./interpreter";
import type { Runner } from "./processRunner";
import { isAtLeast, probeInterpreter } from "./probe";
import { existingEnvironment, findBundledWheel, provisionEnvironment } from "./provision";
import { MIN_PYTHON, StartupError } from "./startupError";

export interface LaunchPlan {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  interpreter: Interpreter;
  /** True when the server runs from the private environment in global storage. */
  provisioned: boolean;
}

export interface LaunchDeps {
  run: Runner;
  lookup: InterpreterLookup;
  bundledDir: string;
  storageDir: string;
  env: NodeJS.ProcessEnv;
  log(line: string): void;
  /** Runs a long task under visible progress (VS Code notification). */
  withProgress<T>(title: string, task: (report: (message: string) => void) => Promise<T>): Promise<T>;
}

export const SERVE_ARGS = ["-m", "baton", "serve"];

function serverEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, PYTHONUNBUFFERED: "1" };
  const devSources = base.BATON_DEV_SERVER_SRC?.trim();
  if (devSources) {
    env.PYTHONPATH = base.PYTHONPATH ? `${devSources}${path.delimiter}${base.PYTHONPATH}` : devSources;
  }
  return env;
}

function isSpawnFailure(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "EACCES" || code === "ENOTDIR";
}

export async function prepareLaunch(deps: LaunchDeps): Promise<LaunchPlan> {
  const interpreter = await resolveInterpreter(deps.lookup);
  const env = serverEnv(deps.env);
  deps.log(`Python: ${interpreter.command} (from ${describeSource(interpreter.source)})`);

  let probe;
  try {
    probe = await probeInterpreter(deps.run, interpreter.command, env);
  } catch (error) {
    if (isSpawnFailure(error)) {
      throw new StartupError({
        kind: "interpreter-not-found",
        interpreter: interpreter.command,
        source: describeSource(interpreter.source),
      });
    }
    throw new StartupError({ kind: "server-failed", interpreter: interpreter.command, detail: String(error) });
  }
  deps.log(`Python ${probe.version.join(".")} at ${probe.executable}; baton: ${probe.baton ?? "not installed"}`);
  if (!isAtLeast(probe.version, MIN_PYTHON)) {
    throw new StartupError({
      kind: "python-too-old",
      interpreter: interpreter.command,
      version: probe.version.join("."),
    });
  }
  if (probe.baton !== null) {
    return { command: interpreter.command, args: SERVE_ARGS, env, interpreter, provisioned: false };
  }

  const wheel = await findBundledWheel(deps.bundledDir);
  if (!wheel) {
    throw new StartupError({
      kind: "baton-missing",
      interpreter: interpreter.command,
      detail: probe.error ?? "import baton failed",
    });
  }
  const existing = await existingEnvironment(deps.storageDir, wheel);
  if (existing) {
    deps.log(`Using the private environment: ${existing}`);
    return { command: existing, args: SERVE_ARGS, env, interpreter, provisioned: true };
  }
  try {
    const python = await deps.withProgress("Baton: installing its Python server", (report) =>
      provisionEnvironment(
        {
          run: deps.run,
          basePython: interpreter.command,
          bundledDir: deps.bundledDir,
          storageDir: deps.storageDir,
          env,
          log: deps.log,
          report,
        },
        wheel,
      ),
    );
    deps.log(`Installed Baton ${wheel.version} into ${python}`);
    return { command: python, args: SERVE_ARGS, env, interpreter, provisioned: true };
  } catch (error) {
    throw new StartupError({
      kind: "provision-failed",
      interpreter: interpreter.command,
      detail: error instanceof Error ? error.message : String(error),
    });
  }
}
