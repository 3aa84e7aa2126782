// Asks an interpreter for its version and whether it can import `baton`.
import type { Runner } from "./processRunner";

export interface ProbeResult {
  version: [number, number, number];
  executable: string;
  /** Installed version of baton, "source" when importable without metadata, null when absent. */
  baton: string | null;
  error?: string;
}

const PROBE_SCRIPT = [
  "import json, sys",
  "r = {'version': list(sys.version_info[:3]), 'executable': sys.executable, 'baton': None}",
  "try:",
  "    import baton",
  "    try:",
  "        from importlib.metadata import version",
  "        r['baton'] = version('baton')",
  "    except Exception:",
  "        r['baton'] = 'source'",
  "except Exception as e:",
  "    r['error'] = repr(e)",
  "print('BATON_PROBE' + json.dumps(r))",
].join("\n");

export async function probeInterpreter(
  run: Runner,
  command: string,
  env: NodeJS.ProcessEnv,
): Promise<ProbeResult> {
  const result = await run(command, ["-c", PROBE_SCRIPT], { env, timeoutMs: 30_000 });
  const line = result.stdout.split("\n").find((l) => l.startsWith("BATON_PROBE"));
  if (!line) {
    throw new Error(
      `"${command}" did not run the probe (exit ${String(result.code)}): ${result.stderr.trim() || result.stdout.trim()}`,
    );
  }
  const parsed = JSON.parse(line.slice("BATON_PROBE".length)) as Partial<ProbeResult>;
  const version = Array.isArray(parsed.version) ? parsed.version : [0, 0, 0];
  return {
    version: [Number(version[0]), Number(version[1]), Number(version[2])],
    executable: typeof parsed.executable === "string" ? parsed.executable : command,
    baton: typeof parsed.baton === "string" ? parsed.baton : null,
    ...(typeof parsed.error === "string" ? { error: parsed.error } : {}),
  };
}

export function isAtLeast(version: readonly number[], min: readonly number[]): boolean {
  for (let i = 0; i < min.length; i++) {
    const a = version[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}
