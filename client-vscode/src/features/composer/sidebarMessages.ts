// The composer's sidebar messages: Send (starting a session when there is none),
// messages queued while the agent works, and the `/` menu.
import * as vscode from "vscode";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";
import type { SidebarHost } from "../../shell/sidebarHost";
import { listCommands, runBuiltin, type BuiltinHost } from "./slashCommands";

export function register(registry: MessageRegistry, host: SidebarHost): Registration[] {
  return [
    registry.on("prompt", async (m) => {
      // Send always works: with no session yet, start one in the mode the composer shows.
      let sessionId = m.sessionId;
      if (!sessionId) {
        sessionId = await host.newSession(m.mode ?? "build");
        host.post({ type: "userMessage", sessionId, text: m.text });
      }
      await host.prompt(sessionId, m.text, m.attachments ?? [], m.images ?? []);
    }),
    registry.on("queue", async (m) => {
      await host.client.request("baton/session/queue", { sessionId: m.sessionId, text: m.text, delivery: m.delivery });
    }),
    registry.on("unqueue", async (m) => {
      await host.client.request("baton/session/unqueue", { sessionId: m.sessionId, id: m.id });
    }),
    registry.on("commandsQuery", async () => host.post(await listCommands(host.client, host.state.activeSessionId ?? null))),
    registry.on("builtinCommand", async (m) => {
      await runBuiltin(builtinHost(host), m.sessionId, m.name, m.arguments);
    }),
  ];
}

/** What a built-in slash command runs on: the sidebar's own commands and methods. */
function builtinHost(host: SidebarHost): BuiltinHost {
  return {
    client: host.client,
    executeCommand: (command, ...args) => vscode.commands.executeCommand(command, ...args),
    newSession: (mode) => host.newSession(mode),
    setMode: (sessionId, mode) => host.setMode(sessionId, mode),
    prompt: async (sessionId, text) => {
      host.post({ type: "userMessage", sessionId, text });
      await host.prompt(sessionId, text);
    },
    error: (message) => host.post({ type: "error", message }),
  };
}
