// Permission prompts: the agent asks before running a command or writing a file.
// The prompt says in words what is asked and what each choice grants; Enter
// allows once (the focused choice), Escape rejects.
import type { PermissionOption, PermissionToolCall } from "../../src/protocol";
import { el } from "../shared/dom";
import { visibleNodes } from "../shared/visible";
import { permissionQuestion } from "./tools";

export interface PermissionPrompt {
  requestId: string;
  toolCall: PermissionToolCall;
  options: PermissionOption[];
  diff?: string;
  /** Why it asks although allowed (a protected path). */
  reason?: string;
}

/**
 * What "always" grants. The server remembers it per session and per category (every
 * shell command; every file write or edit; every tool of MCP servers), not per
 * command or path, so the label says exactly that.
 */
function alwaysLabel(tool: string): { label: string; title: string } {
  if (tool === "bash") {
    return { label: "Allow all commands this session", title: "Every shell command the agent runs in this session runs without asking" };
  }
  if (tool.includes("__")) {
    return { label: "Allow all MCP tools this session", title: "Every MCP tool the agent calls in this session runs without asking" };
  }
  return { label: "Allow all file changes this session", title: "Every file write and edit in this session happens without asking (diffs stay reviewable)" };
}

export function renderPermission(prompt: PermissionPrompt, answer: (optionId: string) => void): HTMLElement {
  const { toolCall } = prompt;
  const command = typeof toolCall.input.command === "string" ? toolCall.input.command : undefined;
  const path = typeof toolCall.input.path === "string" ? toolCall.input.path : undefined;
  const card = el(
    "div",
    {
      class: "permission",
      "data-request-id": prompt.requestId,
      role: "alertdialog",
      "aria-label": "Permission request",
      tabindex: "-1",
    },
    el("div", { class: "permission-title" }, permissionQuestion(toolCall.name, toolCall.input)),
  );
  // Whole, wrapped, control characters made visible: what is approved is what is read.
  if (command !== undefined) card.append(el("pre", { class: "permission-detail" }, ...visibleNodes(command)));
  else if (path) card.append(el("div", { class: "permission-detail path" }, ...visibleNodes(path)));
  else card.append(el("pre", { class: "permission-detail" }, ...visibleNodes(JSON.stringify(toolCall.input, null, 2))));
  if (prompt.reason) card.append(el("div", { class: "permission-reason", role: "note" }, ...visibleNodes(prompt.reason)));
  if (prompt.diff) card.append(el("pre", { class: "permission-diff" }, ...visibleNodes(prompt.diff, false)));
  const buttons = el("div", { class: "permission-actions" });
  let reject: PermissionOption | undefined;
  const choose = (option: PermissionOption) => {
    if (card.dataset.answered) return;
    card.dataset.answered = option.kind;
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    answer(option.optionId);
  };
  for (const option of prompt.options) {
    const always = option.kind === "allow_always" ? alwaysLabel(toolCall.name) : undefined;
    const label = option.kind === "allow_once" ? "Allow once" : option.kind === "reject_once" ? "Reject" : (always?.label ?? option.name ?? option.kind);
    const hint = option.kind === "allow_once" ? " (Enter)" : option.kind === "reject_once" ? " (Escape)" : "";
    const button = el("button", { type: "button", class: `permission-option ${option.kind}`, title: (always?.title ?? label) + hint }, label);
    button.dataset.optionId = option.optionId;
    button.dataset.optionKind = option.kind;
    if (option.kind === "allow_once") button.dataset.default = "true";
    if (option.kind === "reject_once") reject = option;
    button.addEventListener("click", () => choose(option));
    buttons.append(button);
  }
  card.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && reject) {
      event.preventDefault();
      choose(reject);
    }
  });
  card.append(buttons);
  return card;
}
