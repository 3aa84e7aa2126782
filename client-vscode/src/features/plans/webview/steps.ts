// Task-list items in the rendered plan become read-only checkboxes and state icons
// (the plan file is the truth; the agent ticks steps with plan_edit). markdown-it
// renders "- [ ] step" as <li>[ ] step</li>: the marker is taken off the text.
import type { StepState } from "../steps";
import { el } from "../../../shell/webview/shared/dom";

const MARKER = /^\[([ xX~!])\]\s+/;
const STATES: Record<string, StepState> = { " ": "open", x: "done", X: "done", "~": "in_progress", "!": "blocked" };
const LABELS: Record<StepState, string> = { open: "Not started", in_progress: "In progress", blocked: "Blocked", done: "Done" };

export function decorateSteps(root: HTMLElement): void {
  for (const li of root.querySelectorAll<HTMLLIElement>("li")) {
    // The marker is at the start of the item's first text (directly, or in its first <p>).
    const holder = li.firstElementChild?.tagName === "P" && li.firstChild === li.firstElementChild ? li.firstElementChild : li;
    const first = holder.firstChild;
    if (!first || first.nodeType !== Node.TEXT_NODE) continue;
    const match = MARKER.exec(first.textContent ?? "");
    if (!match) continue;
    const state = STATES[match[1] as string] ?? "open";
    first.textContent = (first.textContent ?? "").slice(match[0].length);
    li.classList.add("step");
    li.dataset.state = state;
    let marker: HTMLElement;
    if (state === "open" || state === "done") {
      const box = el("input", { type: "checkbox", class: "step-box", disabled: "", "aria-label": LABELS[state] });
      box.checked = state === "done";
      marker = box;
    } else {
      marker = el("span", { class: `step-icon ${state}`, role: "img", "aria-label": LABELS[state], title: LABELS[state] }, state === "blocked" ? "!" : "◐");
    }
    holder.insertBefore(marker, holder.firstChild);
    li.parentElement?.classList.add("steps");
  }
}
