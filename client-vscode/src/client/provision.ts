// The private Python environment Baton installs itself into when the chosen
// interpreter lacks the `baton` package: a venv in the extension's global
// storage, installed from the wheels shipped in the .vsix (bundled/), offline
// first. Reused while the shipped Baton wheel is unchanged.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Runner } from "./processRunner";

export interface BundledWheel {
  file: string;
  version: string;
}

export interface ProvisionOptions {
  run: Runner;
  /** Interpreter (3.11+) that creates the venv. */
  basePython: string;
  /** client-vscode/bundled inside the installed extension. */
  bundledDir: string;
  /** The extension's global storage folder. */
  storageDir: string;
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  log(line: string): void;
  report(message: string): void;
}

const MARKER = ".baton-wheel";

export async function findBundledWheel(bundledDir: string): Promise<BundledWheel | undefined> {
  let names: string[];
  try {
    names = await readdir(bundledDir);
  } catch {
    return undefined;
  }
  const wheel = names
    .filter((n) => /^baton-[^-]+-.*\.whl$/.test(n))
    .sort()
    .pop();
  if (!wheel) return undefined;
  return { file: path.join(bundledDir, wheel), version: wheel.split("-")[1] ?? "unknown" };
}

export function venvDir(storageDir: string): string {
  return path.join(storageDir, "python-env");
}

export function venvPython(dir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? path.join(dir, "Scripts", "python.exe") : path.join(dir, "bin", "python");
}

async function wheelFingerprint(wheel: BundledWheel): Promise<string> {
  const digest = createHash("sha256").update(await readFile(wheel.file)).digest("hex");
  return `${path.basename(wheel.file)} ${digest}`;
}

/** The venv's interpreter if it is already provisioned from this wheel, else undefined. */
export async function existingEnvironment(
  storageDir: string,
  wheel: BundledWheel,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  const dir = venvDir(storageDir);
  const python = venvPython(dir, platform);
  if (!existsSync(python)) return undefined;
  try {
    const marker = (await readFile(path.join(dir, MARKER), "utf8")).trim();
    return marker === (await wheelFingerprint(wheel)) ? python : undefined;
  } catch {
    return undefined;
  }
}

/** Creates (or re-creates) the venv and installs the bundled wheel; returns its interpreter. */
export async function provisionEnvironment(
  options: ProvisionOptions,
  wheel: BundledWheel,
): Promise<string> {
  const platform = options.platform ?? process.platform;
  const dir = venvDir(options.storageDir);
  const python = venvPython(dir, platform);
  const step = async (message: string, command: string, args: string[]): Promise<void> => {
    options.report(message);
    options.log(`> ${command} ${args.join(" ")}`);
    const result = await options.run(command, args, {
      env: options.env,
      timeoutMs: 10 * 60_000,
      onOutput: (chunk) => options.log(chunk.replace(/\n$/, "")),
    });
    if (result.code !== 0) {
      throw new Error(
        `${message} failed (exit ${String(result.code)}): ${result.stderr.trim().split("\n").pop() ?? ""}`,
      );
    }
  };

  await mkdir(options.storageDir, { recursive: true });
  await rm(dir, { recursive: true, force: true });
  await step("Creating a Python environment", options.basePython, ["-m", "venv", dir]);
  const pipArgs = ["-m", "pip", "install", "--disable-pip-version-check", "--find-links", options.bundledDir];
  try {
    await step(`Installing Baton ${wheel.version} (offline)`, python, [...pipArgs, "--no-index", wheel.file]);
  } catch (offlineError) {
    // The bundled dependency wheels may not fit this platform or Python; fall
    // back to the package index for the dependencies only.
    options.log(`offline install failed, trying with the package index: ${String(offlineError)}`);
    await step(`Installing Baton ${wheel.version} and its dependencies`, python, [...pipArgs, wheel.file]);
  }
  await writeFile(path.join(dir, MARKER), `${await wheelFingerprint(wheel)}\n`);
  return python;
}
