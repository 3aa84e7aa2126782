// Why the server could not start, and what the person can do about it.

export type StartupProblem =
  | { kind: "interpreter-not-found"; interpreter: string; source: string }
  | { kind: "python-too-old"; interpreter: string; version: string }
  | { kind: "baton-missing"; interpreter: string; detail: string }
  | { kind: "provision-failed"; interpreter: string; detail: string }
  | { kind: "server-failed"; interpreter: string; detail: string }
  | { kind: "connect-failed"; address: string; detail: string };

export class StartupError extends Error {
  constructor(readonly problem: StartupProblem) {
    super(describeProblem(problem).message);
    this.name = "StartupError";
  }
}

export type FixAction = "openPythonSetting" | "showLog" | "restart";

export interface ProblemDescription {
  message: string;
  actions: ReadonlyArray<{ title: string; action: FixAction }>;
}

export const MIN_PYTHON: readonly [number, number] = [3, 11];

export function describeProblem(problem: StartupProblem): ProblemDescription {
  const setPath = { title: "Set Python Path", action: "openPythonSetting" as const };
  const showLog = { title: "Show Log", action: "showLog" as const };
  const retry = { title: "Restart Server", action: "restart" as const };
  switch (problem.kind) {
    case "interpreter-not-found":
      return {
        message:
          `Baton: the Python interpreter "${problem.interpreter}" (${problem.source}) was not found. ` +
          `Install Python ${MIN_PYTHON.join(".")} or newer, or point the "baton.pythonPath" setting at one.`,
        actions: [setPath, showLog],
      };
    case "python-too-old":
      return {
        message:
          `Baton: the server needs Python ${MIN_PYTHON.join(".")} or newer, but "${problem.interpreter}" is ${problem.version}. ` +
          `Set "baton.pythonPath" to a newer interpreter.`,
        actions: [setPath, showLog],
      };
    case "baton-missing":
      return {
        message:
          `Baton: "${problem.interpreter}" has no "baton" package and this build of the extension ships none to install. ` +
          `Run "${problem.interpreter} -m pip install baton" (or "pip install -e ." in the Baton repository), or set "baton.pythonPath".`,
        actions: [setPath, showLog, retry],
      };
    case "provision-failed":
      return {
        message:
          `Baton: could not install the server into its private Python environment (${firstLine(problem.detail)}). ` +
          `See the log; "baton.pythonPath" can point at an interpreter that has "baton" installed.`,
        actions: [showLog, retry, setPath],
      };
    case "connect-failed":
      return {
        message:
          `Baton: could not use the Baton server at ${problem.address} (${firstLine(problem.detail)}). ` +
          `Check "baton.server.tcp" and "baton.server.tokenFile", or clear "baton.server.tcp" to let Baton start its own server.`,
        actions: [showLog, retry],
      };
    case "server-failed":
      return {
        message: `Baton: the server did not start (${firstLine(problem.detail)}). See the log for its output.`,
        actions: [showLog, retry, setPath],
      };
  }
}

function firstLine(text: string): string {
  const line = text.trim().split("\n").find((l) => l.trim() !== "") ?? "unknown error";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
