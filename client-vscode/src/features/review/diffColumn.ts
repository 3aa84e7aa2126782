// Where a diff opens. While a plan is built, the person follows the plan panel: a write's
// diff opened in the active group (the plan's, after Approve) covered the plan, so the
// diff goes to another group, or beside it when the plan's group is the only one.
import * as vscode from "vscode";
import { PLAN_VIEW_TYPE } from "../plans/viewType";

interface GroupLike {
  readonly viewColumn: vscode.ViewColumn;
  readonly activeTab?: { readonly input: unknown } | undefined;
}

function showsPlan(group: GroupLike | undefined): boolean {
  const input = group?.activeTab?.input as { viewType?: unknown } | undefined;
  // VS Code prefixes an extension's webview type (`mainThreadWebview-baton.plan`).
  return typeof input?.viewType === "string" && input.viewType.endsWith(PLAN_VIEW_TYPE);
}

/** The column for a diff: undefined (the active group) unless that group shows a plan. */
export function diffColumn(groups: readonly GroupLike[], active: GroupLike | undefined): vscode.ViewColumn | undefined {
  if (!showsPlan(active)) return undefined;
  const other = groups.find((group) => group !== active && !showsPlan(group));
  return other ? other.viewColumn : vscode.ViewColumn.Beside;
}
