// The content a write or edit would leave, computed from the permission
// request: the server's unified diff applied to the file as it is now (the
// diff was computed from the same bytes, so it applies exactly); `write`
// carries its whole new content, which is used as is. Pure: unit-tested.
import { applyPatch } from "diff";

export interface ProposalInput {
  tool: string;
  input: Record<string, unknown>;
  diff: string | undefined;
  /** The file's current text; undefined when it does not exist. */
  current: string | undefined;
}

/** The proposed text, or undefined when it cannot be worked out (then the diff is shown as text). */
export function proposedContent({ tool, input, diff, current }: ProposalInput): string | undefined {
  if (tool === "write" && typeof input.content === "string") return input.content;
  if (!diff) return undefined;
  const applied = applyPatch(current ?? "", diff);
  return applied === false ? undefined : applied;
}

/** The workspace-relative path a file tool names (its `path` input), if any. */
export function toolPath(input: Record<string, unknown>): string | undefined {
  return typeof input.path === "string" && input.path !== "" ? input.path : undefined;
}

/** Tools whose permission requests are reviewed in the diff editor. */
export function isReviewable(tool: string, diff: string | undefined | null): diff is string {
  return (tool === "write" || tool === "edit") && typeof diff === "string" && diff !== "";
}
