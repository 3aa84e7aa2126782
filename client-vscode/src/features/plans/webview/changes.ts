// What changed in the plan since the version the person last saw in this
// panel: the lines of the new version that were added or rewritten (and where
// lines were removed), marked on the rendered blocks that hold them.
import { diffLines } from "diff";

export interface SeenPlan {
  path: string;
  version: number;
  content: string;
}

export interface PlanChanges {
  /** 1-based lines of the new version added or rewritten; a removal marks the line that now stands in its place. */
  lines: Set<number>;
  /** Lines of the old version that are gone. */
  removed: number;
}

export function changedLines(before: string, after: string): PlanChanges {
  const lines = new Set<number>();
  let removed = 0;
  // The trailing newline ends the last line; it starts no line a removal could point at.
  const last = Math.max(1, after.replace(/\n$/, "").split("\n").length);
  const changes = diffLines(before, after);
  const size = (value: string, count?: number) => count ?? value.replace(/\n$/, "").split("\n").length;
  let line = 1;
  changes.forEach((change, i) => {
    const count = size(change.value, change.count);
    if (change.added) {
      for (let k = 0; k < count; k++) lines.add(line + k);
      line += count;
    } else if (change.removed) {
      // Lines rewritten are marked by what replaced them; only the lines beyond those are gone.
      const next = changes[i + 1];
      const replacedBy = next?.added ? size(next.value, next.count) : 0;
      removed += Math.max(0, count - replacedBy);
      if (count > replacedBy) lines.add(Math.min(line + replacedBy, last));
    } else {
      line += count;
    }
  });
  return { lines, removed };
}

/**
 * Marks the innermost rendered block holding each changed line (blocks carry
 * their source lines in data-line/data-line-end); returns how many blocks.
 */
export function markChanged(container: HTMLElement, lines: Set<number>): number {
  const blocks = [...container.querySelectorAll<HTMLElement>("[data-line]")].map((element) => ({
    element,
    start: Number(element.dataset.line),
    end: Number(element.dataset.lineEnd ?? element.dataset.line),
  }));
  const marked = new Set<HTMLElement>();
  for (const line of lines) {
    // Descendants follow their ancestors in document order: the last block holding the line is the innermost.
    let innermost: HTMLElement | undefined;
    for (const block of blocks) if (block.start <= line && line <= block.end) innermost = block.element;
    if (innermost) marked.add(innermost);
  }
  for (const element of marked) element.classList.add("plan-changed");
  return marked.size;
}
