// The slash menu's messages between the sidebar host and its webview, with guards.
import { isRecord, isString, type Json } from "../../shell/guards";

/** One slash command as the menu shows it (`baton/commands/list`). */
export interface CommandView {
  name: string;
  description: string;
  source: "builtin" | "skill" | "command";
  argumentHint?: string;
}

export type CommandInbound = { type: "commands"; commands: CommandView[]; problems: string[] };

export type CommandOutbound =
  /** The person typed `/`: the host answers with the current list. */
  | { type: "commandsQuery" }
  /** A built-in (`/compact`, `/plan` …): run by the host on its own commands, not sent as a prompt. */
  | { type: "builtinCommand"; sessionId: string | null; name: string; arguments: string };

export const COMMAND_OUTBOUND_TYPES = ["commandsQuery", "builtinCommand"] as const;
export const COMMAND_INBOUND_TYPES = ["commands"] as const;

const SOURCES = new Set(["builtin", "skill", "command"]);
const MAX_COMMANDS = 2000;

function parseCommand(value: unknown): CommandView | undefined {
  if (!isRecord(value) || !isString(value.name, 200) || value.name === "" || !isString(value.description, 4096)) return undefined;
  if (!isString(value.source) || !SOURCES.has(value.source)) return undefined;
  const hint = value.argumentHint;
  if (hint !== undefined && hint !== null && !isString(hint, 1000)) return undefined;
  return {
    name: value.name,
    description: value.description,
    source: value.source as CommandView["source"],
    ...(isString(hint) && hint !== "" ? { argumentHint: hint } : {}),
  };
}

export function parseCommands(value: unknown): CommandView[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_COMMANDS) return undefined;
  const commands = value.map(parseCommand);
  return commands.every((c): c is CommandView => c !== undefined) ? commands : undefined;
}

export function parseCommandOutbound(m: Json & { type: string }): CommandOutbound | undefined {
  switch (m.type) {
    case "commandsQuery":
      return { type: "commandsQuery" };
    case "builtinCommand": {
      const sessionId = m.sessionId === null || m.sessionId === undefined ? null : isString(m.sessionId, 200) ? m.sessionId : undefined;
      if (sessionId === undefined || !isString(m.name, 200) || !isString(m.arguments)) return undefined;
      return { type: "builtinCommand", sessionId, name: m.name, arguments: m.arguments };
    }
  }
  return undefined;
}

export function parseCommandInbound(m: Json & { type: string }): CommandInbound | undefined {
  if (m.type !== "commands") return undefined;
  const commands = parseCommands(m.commands);
  const problems = Array.isArray(m.problems) && m.problems.every((p) => isString(p, 8192)) ? (m.problems as string[]) : undefined;
  return commands && problems ? { type: "commands", commands, problems } : undefined;
}

/** `["compact", "keep the API notes"]` for `/compact keep the API notes`; undefined for anything else. */
export function splitCommand(text: string): [string, string] | undefined {
  const match = /^\/([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return match ? [match[1] ?? "", (match[2] ?? "").trim()] : undefined;
}
