// A write's diff never opens over the plan panel the person is following (during a build
// the plan's group is the active one after Approve).
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import { diffColumn } from "../../src/features/review/diffColumn";

const plan = { input: { viewType: "mainThreadWebview-baton.plan" } };
const file = { input: { uri: "file:///w/a.py" } };

describe("diffColumn", () => {
  it("opens in the active group when it shows no plan", () => {
    const active = { viewColumn: vscode.ViewColumn.One, activeTab: file };
    expect(diffColumn([active], active)).toBeUndefined();
    expect(diffColumn([], undefined)).toBeUndefined();
  });

  it("opens in another group when the active one shows the plan", () => {
    const planGroup = { viewColumn: vscode.ViewColumn.Two, activeTab: plan };
    const editors = { viewColumn: vscode.ViewColumn.One, activeTab: file };
    expect(diffColumn([editors, planGroup], planGroup)).toBe(vscode.ViewColumn.One);
  });

  it("opens beside the plan when its group is the only one, or every group shows a plan", () => {
    const planGroup = { viewColumn: vscode.ViewColumn.One, activeTab: plan };
    expect(diffColumn([planGroup], planGroup)).toBe(vscode.ViewColumn.Beside);
    const another = { viewColumn: vscode.ViewColumn.Two, activeTab: plan };
    expect(diffColumn([planGroup, another], planGroup)).toBe(vscode.ViewColumn.Beside);
  });
});
