// Baton: Set OpenAI API Key, Restart Server, Show Server Log.
import * as vscode from "vscode";
import { OPENAI_KEY_SECRET, type Services } from "../../services";

export async function setOpenAIApiKey(services: Services): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: "Baton: OpenAI API key",
    prompt: "Kept in VS Code's secret storage and handed to the server in memory; never written to settings.",
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() === "" ? "Enter a key" : undefined),
  });
  if (key === undefined) return;
  await services.secrets.store(OPENAI_KEY_SECRET, key.trim());
  if (services.client.state === "running") {
    await services.client.request("baton/auth/set", { provider: "openai", apiKey: key.trim() });
  }
  // The welcome and the error actions follow: "No model is set up yet" is over.
  await services.sidebar.postSetup();
  void vscode.window.showInformationMessage("Baton: OpenAI API key saved.");
}

/** Hands the stored key to a freshly started server. */
export async function sendStoredKey(services: Pick<Services, "secrets">, request: (key: string) => Promise<unknown>): Promise<void> {
  const key = await services.secrets.get(OPENAI_KEY_SECRET);
  if (key) await request(key);
}

export async function restartServer(services: Services): Promise<void> {
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "Baton: restarting the server" },
    () => services.client.restart(),
  );
}

export function showServerLog(services: Services): void {
  services.output.show(true);
}
