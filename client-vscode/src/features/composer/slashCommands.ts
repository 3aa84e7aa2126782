// The host side of the sidebar's slash menu: the list (`baton/commands/list`) and
// the built-ins, each run on the command or method behind the sidebar's own
// buttons. Skills and command files are sent as the prompt the person typed: the
// server expands them and keeps what was typed.
import type { BatonClient } from "../../client/batonClient";
import type { Mode } from "../../protocol";
import { parseCommands, type CommandInbound } from "./commandMessages";

export interface BuiltinHost {
  client: BatonClient;
  executeCommand(command: string, ...args: unknown[]): Thenable<unknown>;
  /** Makes a session (the first prompt's, when there is none yet) and returns its id. */
  newSession(mode: Mode): Promise<string>;
  setMode(sessionId: string, mode: Mode): Promise<void>;
  prompt(sessionId: string, text: string): Promise<void>;
  error(message: string): void;
}

export async function listCommands(client: BatonClient, sessionId: string | null): Promise<CommandInbound> {
  const result = await client.request("baton/commands/list", sessionId ? { sessionId } : {});
  return { type: "commands", commands: parseCommands(result.commands) ?? [], problems: result.problems ?? [] };
}

const APPROVALS: Record<string, string> = {
  "": "baton.approvePlanKeepContext",
  fresh: "baton.approvePlan",
  steps: "baton.approvePlanStepByStep",
};

/** Runs `/name args` for a built-in; false when `name` is not one. */
export async function runBuiltin(host: BuiltinHost, sessionId: string | null, name: string, args: string): Promise<boolean> {
  if (name === "new") {
    await host.newSession(args === "plan" ? "plan" : "build");
    return true;
  }
  if (!["compact", "plan", "approve", "review", "changes", "undo", "context"].includes(name)) return false;
  const id = sessionId ?? (await host.newSession(name === "plan" ? "plan" : "build"));
  switch (name) {
    case "compact":
      if (args) await host.client.request("baton/session/compact", { sessionId: id, instructions: args });
      else await host.executeCommand("baton.compactSession", id);
      return true;
    case "plan":
      await host.setMode(id, "plan");
      if (args) await host.prompt(id, args);
      return true;
    case "approve": {
      // The menu offers what the server's /approve takes: nothing, `fresh` or `steps`.
      const command = APPROVALS[args];
      if (!command) {
        host.error("/approve takes no argument, `fresh` (a fresh context) or `steps` (each step in a fresh child)");
        return true;
      }
      await host.executeCommand(command, id);
      return true;
    }
    case "review":
      await host.executeCommand("baton.showPlan", id);
      return true;
    case "changes":
      if (!args) {
        host.error("/changes needs the feedback to send, e.g. `/changes 7: split this step`");
        return true;
      }
      await host.client.request("baton/plan/requestChanges", { sessionId: id, feedback: args });
      return true;
    case "undo":
      await host.executeCommand("baton.undoLastTurn", id);
      return true;
    case "context":
      await host.executeCommand("baton.contextMenu", id);
      return true;
  }
  return false;
}
