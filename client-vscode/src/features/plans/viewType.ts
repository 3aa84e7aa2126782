// The plan panel's webview type: one name for the panels that open it and for the code
// that tells a plan's tab apart from an editor's (src/features/review/diffColumn.ts).
export const PLAN_VIEW_TYPE = "baton.plan";
