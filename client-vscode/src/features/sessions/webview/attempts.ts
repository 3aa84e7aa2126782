// A retry replaces the failed attempt in place: the turn Retry took back (its prompt,
// partial answer, error card, Undo bar and fork point) folds into one closed
// "Earlier attempt" line right above the prompt sent again, one click away, instead of
// a struck-through duplicate and a dimmed answer above it.
import { el } from "../../../shell/webview/shared/dom";

const textOf = (node: HTMLElement) => (node.dataset.text ?? node.textContent ?? "").trim();

/** Folds every taken-back turn that the next prompt repeats (a retry). Idempotent. */
export function foldRetriedAttempts(root: HTMLElement): void {
  const children = Array.from(root.children) as HTMLElement[];
  for (let i = 0; i < children.length; i++) {
    const start = children[i];
    if (!start || start.dataset.kind !== "user" || start.dataset.reverted !== "true") continue;
    let end = i + 1;
    while (end < children.length && children[end]?.dataset.kind !== "user") end++;
    const next = children[end];
    // The prompt sent again may itself have been retried (a second Retry): each earlier
    // attempt folds above the one that repeated it.
    if (!next || textOf(next) !== textOf(start)) continue;
    const block = children.slice(i, end);
    const failed = block.some((node) => node.dataset.kind === "error");
    const fold = el(
      "details",
      { class: "earlier-attempt", "data-kind": "earlier-attempt" },
      el(
        "summary",
        { title: "Retry took this attempt back (its file changes were restored) and sent the prompt again" },
        failed ? "Earlier attempt failed · show" : "Earlier attempt · show",
      ),
    );
    start.before(fold);
    for (const node of block) {
      // No forking from an attempt that was taken back.
      if (node.dataset.kind === "fork-point") node.remove();
      else fold.append(node);
    }
    i = end - 1;
  }
}
