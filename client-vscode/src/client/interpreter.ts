// Which Python runs the server: the `baton.pythonPath` setting, else the
// development override from the launch configuration, else the Python
// extension's active interpreter (when installed), else `python3`.

export type InterpreterSource = "setting" | "development" | "python-extension" | "default";

export interface Interpreter {
  command: string;
  source: InterpreterSource;
}

export interface InterpreterLookup {
  /** `baton.pythonPath`, if set. */
  setting(): string | undefined;
  /** Environment of the extension host (BATON_DEV_PYTHON is set by the "Run Extension" launch configuration). */
  env: Readonly<Record<string, string | undefined>>;
  /** The Python extension's active interpreter, if that extension is installed. */
  pythonExtension(): Promise<string | undefined>;
}

export async function resolveInterpreter(lookup: InterpreterLookup): Promise<Interpreter> {
  const setting = lookup.setting()?.trim();
  if (setting) return { command: expandHome(setting, lookup.env), source: "setting" };
  const dev = lookup.env.BATON_DEV_PYTHON?.trim();
  if (dev) return { command: dev, source: "development" };
  try {
    const fromExtension = (await lookup.pythonExtension())?.trim();
    if (fromExtension) return { command: fromExtension, source: "python-extension" };
  } catch {
    // The Python extension is optional; any failure there means "not available".
  }
  return { command: "python3", source: "default" };
}

function expandHome(value: string, env: Readonly<Record<string, string | undefined>>): string {
  if (value === "~" || value.startsWith("~/")) {
    const home = env.HOME ?? env.USERPROFILE;
    if (home) return home + value.slice(1);
  }
  return value;
}

export function describeSource(source: InterpreterSource): string {
  switch (source) {
    case "setting":
      return "the baton.pythonPath setting";
    case "development":
      return "BATON_DEV_PYTHON (launch configuration)";
    case "python-extension":
      return "the Python extension's active interpreter";
    case "default":
      return "the default (python3 on PATH)";
  }
}
