// Permission prompts: the agent asks before running a command or writing a file.
// The prompt names the tool in words and says what each choice grants, narrowest
// first: this exact command, this one file, or every call of the kind, for the rest
// of the session. Keyboard: Enter answers the focused choice (Allow once when the
// prompt opens), 1–9 pick a choice by its number, Escape rejects. A write or edit
// whose proposal the person changed in the diff editor says so: Allow once becomes
// "Accept with your edits", and every allow choice writes their version.
import type { PermissionOption, PermissionToolCall } from "../../../protocol";
import { el } from "../../../shell/webview/shared/dom";
import { visibleNodes } from "../../../shell/webview/shared/visible";
import { permissionQuestion } from "../../sessions/webview/tools";

export interface PermissionPrompt {
  requestId: string;
  toolCall: PermissionToolCall;
  options: PermissionOption[];
  diff?: string;
  /** Why it asks although allowed (a protected path). */
  reason?: string;
}

interface Choice {
  label: string;
  title: string;
}

const basename = (path: string): string => path.replace(/[\\/]+$/, "").split(/[\\/]/).pop() || path;

/** A category "always" in words (also for servers that send no `scope`: the category was all they had). */
function categoryChoice(tool: string): Choice {
  if (tool === "bash") {
    return { label: "Always allow every command in this session", title: "Every shell command the agent runs in this session runs without asking" };
  }
  if (tool.includes("__")) {
    return { label: "Always allow every MCP tool in this session", title: "Every MCP tool the agent calls in this session runs without asking" };
  }
  return {
    label: "Always allow every file change in this session",
    title: "Every file write and edit in this session happens without asking (diffs stay reviewable)",
  };
}

/** What a choice says on its button and in its tooltip. */
export function choiceText(option: PermissionOption, toolCall: PermissionToolCall): Choice {
  const command = typeof toolCall.input.command === "string" ? toolCall.input.command : "";
  const path = typeof toolCall.input.path === "string" ? toolCall.input.path : "";
  switch (option.kind) {
    case "allow_once":
      return { label: "Allow once", title: "Allow this one call; the agent asks again next time (Enter)" };
    case "reject_once":
      return { label: "Reject", title: "Do not run it; the agent is told it was refused (Escape)" };
    default:
      break;
  }
  switch (option.scope) {
    case "command":
      return {
        label: "Always allow this command in this session",
        title: `Exactly this command (${command}) runs without asking for the rest of this session; other commands still ask`,
      };
    case "path":
      return {
        label: `Always allow changes to ${basename(path) || "this file"} in this session`,
        title: `Writes and edits to ${path} happen without asking for the rest of this session; other files still ask (diffs stay reviewable)`,
      };
    case "tool":
      return {
        label: "Always allow this tool in this session",
        title: `${toolCall.name} runs without asking for the rest of this session; other tools still ask`,
      };
    case "category":
    case undefined:
      return categoryChoice(toolCall.name);
    default:
      return { label: option.name ?? "Always allow", title: option.name ?? "Always allow" };
  }
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
      "data-tool": toolCall.name,
      role: "alertdialog",
      "aria-label": `Permission request: ${permissionQuestion(toolCall.name, toolCall.input)}`,
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
  const buttons = el("div", { class: "permission-actions", role: "group", "aria-label": "Choices" });
  let reject: PermissionOption | undefined;
  const choose = (option: PermissionOption) => {
    if (card.dataset.answered) return;
    card.dataset.answered = option.kind;
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    answer(option.optionId);
  };
  prompt.options.forEach((option, index) => {
    const { label, title } = choiceText(option, toolCall);
    const number = index + 1;
    const keyed = number <= 9;
    const button = el(
      "button",
      { type: "button", class: `permission-option ${option.kind}`, title, ...(keyed ? { "aria-keyshortcuts": String(number) } : {}) },
      ...(keyed ? [el("span", { class: "permission-key", "aria-hidden": "true" }, String(number))] : []),
      el("span", { class: "permission-label" }, label),
    );
    button.dataset.optionId = option.optionId;
    button.dataset.optionKind = option.kind;
    if (option.scope) button.dataset.scope = option.scope;
    if (option.kind === "allow_once") button.dataset.default = "true";
    if (option.kind === "reject_once") reject = option;
    button.addEventListener("click", () => choose(option));
    buttons.append(button);
  });
  card.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Escape" && reject) {
      event.preventDefault();
      choose(reject);
      return;
    }
    const index = /^[1-9]$/.test(event.key) ? Number(event.key) - 1 : -1;
    const option = prompt.options[index];
    if (option) {
      event.preventDefault();
      choose(option);
    }
  });
  card.append(buttons, el("div", { class: "permission-hint", "aria-hidden": "true" }, "Enter: the highlighted choice · 1–" + Math.min(9, prompt.options.length) + ": pick · Esc: reject"));
  return card;
}

export const EDITED_ALLOW_LABEL = "Accept with your edits";
const EDITED_NOTE =
  "You edited the proposal in the diff editor: allowing writes your version, not the agent's (the diff above is the agent's; the agent is told what you changed).";

/** Marks a write/edit card as edited in the diff editor (or not any more). */
export function markEdited(card: HTMLElement, edited: boolean): void {
  if (edited) card.dataset.edited = "true";
  else delete card.dataset.edited;
  card.querySelector(".permission-edited")?.remove();
  if (edited) {
    const note = el("div", { class: "permission-edited", role: "note" }, EDITED_NOTE);
    card.querySelector(".permission-actions")?.before(note);
  }
  for (const button of card.querySelectorAll<HTMLButtonElement>("button.permission-option")) {
    const kind = button.dataset.optionKind;
    if (kind !== "allow_once" && kind !== "allow_always") continue;
    const label = button.querySelector<HTMLElement>(".permission-label");
    if (!label) continue;
    if (button.dataset.label === undefined) button.dataset.label = label.textContent ?? "";
    if (button.dataset.tip === undefined) button.dataset.tip = button.title;
    if (kind === "allow_once") label.textContent = edited ? EDITED_ALLOW_LABEL : button.dataset.label;
    button.title = edited ? `${button.dataset.tip}; writes your edited version` : button.dataset.tip;
  }
}
