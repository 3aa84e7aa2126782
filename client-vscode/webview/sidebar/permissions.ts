// Permission prompts: the agent asks before running a command or writing a
// file; the person allows once, always, or rejects.
import type { PermissionOption, PermissionToolCall } from "../../src/protocol";
import { el } from "../shared/dom";

const LABELS: Record<string, string> = {
  allow_once: "Allow once",
  allow_always: "Always allow",
  reject_once: "Reject",
};

export interface PermissionPrompt {
  requestId: string;
  toolCall: PermissionToolCall;
  options: PermissionOption[];
  diff?: string;
}

export function renderPermission(prompt: PermissionPrompt, answer: (optionId: string) => void): HTMLElement {
  const { toolCall } = prompt;
  const command = typeof toolCall.input.command === "string" ? toolCall.input.command : undefined;
  const path = typeof toolCall.input.path === "string" ? toolCall.input.path : undefined;
  const card = el(
    "div",
    { class: "permission", "data-request-id": prompt.requestId, role: "alertdialog", "aria-label": "Permission request" },
    el("div", { class: "permission-title" }, `The agent wants to use ${toolCall.name}`),
  );
  if (command) card.append(el("pre", { class: "permission-detail" }, command));
  else if (path) card.append(el("div", { class: "permission-detail" }, path));
  else card.append(el("pre", { class: "permission-detail" }, JSON.stringify(toolCall.input, null, 2)));
  if (prompt.diff) card.append(el("pre", { class: "permission-diff" }, prompt.diff));
  const buttons = el("div", { class: "toolbar" });
  for (const option of prompt.options) {
    const button = document.createElement("vscode-button");
    button.textContent = option.name ?? LABELS[option.kind] ?? option.kind;
    button.dataset.optionId = option.optionId;
    button.dataset.optionKind = option.kind;
    if (option.kind !== "allow_once") button.setAttribute("secondary", "");
    button.addEventListener("click", () => {
      for (const b of buttons.querySelectorAll("vscode-button")) b.setAttribute("disabled", "");
      answer(option.optionId);
    });
    buttons.append(button);
  }
  card.append(buttons);
  return card;
}
