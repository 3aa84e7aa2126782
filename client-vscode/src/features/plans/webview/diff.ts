// A line diff between two plan versions, rendered as text (never HTML).
import { diffLines } from "diff";
import { el } from "../../../shell/webview/shared/dom";

export function renderDiff(target: HTMLElement, before: string, after: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  const nodes: HTMLElement[] = [];
  for (const change of diffLines(before, after)) {
    const kind = change.added ? "added" : change.removed ? "removed" : "same";
    const prefix = change.added ? "+ " : change.removed ? "- " : "  ";
    const lines = change.value.replace(/\n$/, "").split("\n");
    for (const line of lines) {
      if (kind === "added") added++;
      if (kind === "removed") removed++;
      nodes.push(el("span", { class: `diff-line ${kind}`, "data-diff": kind }, prefix + line + "\n"));
    }
  }
  target.replaceChildren(...nodes);
  return { added, removed };
}
