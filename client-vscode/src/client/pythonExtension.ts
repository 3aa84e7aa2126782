// The active interpreter from the Python extension (ms-python.python), if it is
// installed. Its API is optional and typed here only as far as it is used.
import * as vscode from "vscode";

interface PythonEnvironmentsApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(
      env: { path: string } | string,
    ): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] };
  };
}

export async function activePythonInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonEnvironmentsApi>("ms-python.python");
  if (!extension) return undefined;
  const api = extension.isActive ? extension.exports : await extension.activate();
  const envPath = api?.environments?.getActiveEnvironmentPath(resource);
  if (envPath && api?.environments?.resolveEnvironment) {
    const resolved = await api.environments.resolveEnvironment(envPath);
    const executable = resolved?.executable?.uri?.fsPath;
    if (executable) return executable;
  }
  if (envPath?.path) return envPath.path;
  return api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
}
