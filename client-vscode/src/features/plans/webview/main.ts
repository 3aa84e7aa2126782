// The plan review panel's webview: the plan rendered safely from markdown,
// its status and version, Approve and build in a fresh context / Approve /
// Request changes (an overall comment and line-by-line annotations) / Open plan
// file, and the version history with a diff between any two versions.
import "../../../shell/webview/shared/elements";
import "./plan.css";
import type { PlanInfo, PlanVersion } from "../../../protocol";
import { parsePlanInbound, type PlanInbound, type PlanOutbound } from "../messages";
import { byId, el, setDisabled } from "../../../shell/webview/shared/dom";
import { setMarkdown } from "../../../shell/webview/shared/markdown";
import { connectHost } from "../../../shell/webview/shared/vscodeApi";
import { countSteps } from "../steps";
import { interceptLinks } from "../../../shell/webview/shared/links";
import type { DraftAnnotation } from "../annotations";
import { renderDiff } from "./diff";
import { ReviewUi, savedAnnotations } from "./review";
import { decorateSteps } from "./steps";
import { changedLines, markChanged, type SeenPlan } from "./changes";

interface SavedState {
  tab: "plan" | "history";
  annotations?: DraftAnnotation[];
  /** The version last rendered while the panel was in view: revisions are marked against it. */
  seen?: SeenPlan;
}

const host = connectHost<PlanOutbound, SavedState>();
const app = byId("plan-app");
const content = byId("plan-content");
const approve = byId("approve");
const approveFresh = byId("approve-fresh");
const approveSteps = byId("approve-steps");
const feedbackBox = byId("feedback-box");
const feedback = byId<HTMLElement & { value: string }>("feedback");
const notice = byId("notice");
const fromSelect = byId<HTMLSelectElement>("diff-from");
const toSelect = byId<HTMLSelectElement>("diff-to");
const diffOut = byId("diff");

let plan: PlanInfo | null = null;
let versions: PlanVersion[] = [];
let busy = false;
let running = false;
/** The step a child builds now, in a plan built step by step. */
let building: { index: number; total: number; description: string } | null = null;
/** The plan's status and version when the notice was shown: a notice lasts while they hold. */
let noticeFor: string | undefined;
const contents = new Map<number, string>();
let wantedDiff: { from: number; to: number } | undefined;
let tab: SavedState["tab"] = host.getState()?.tab ?? "plan";
let seen: SeenPlan | undefined = validSeen(host.getState()?.seen);
/** The version the shown one is compared with (what the person saw before it), if it differs. */
let since: SeenPlan | null = null;
let shown: string | undefined;
/** What the host says of the panel; the document's own visibility covers the rest. */
let inView = true;

function validSeen(value: unknown): SeenPlan | undefined {
  const v = value as Partial<SeenPlan> | undefined;
  return v && typeof v.path === "string" && typeof v.version === "number" && typeof v.content === "string"
    ? { path: v.path, version: v.version, content: v.content }
    : undefined;
}

const isReviewable = () => plan !== null && (plan.status === "draft" || plan.status === "awaiting_approval");
const review = new ReviewUi(
  content,
  {
    plan: () => (plan ? { content: plan.content, version: plan.version } : null),
    reviewable: () => isReviewable() && !running && !busy,
    changed: (annotations) => {
      save(annotations);
      renderSend();
    },
  },
  savedAnnotations(host.getState()?.annotations),
);

function save(annotations: DraftAnnotation[]): void {
  host.setState({ tab, ...(annotations.length ? { annotations } : {}), ...(seen ? { seen } : {}) });
}

const STATUS_LABELS: Record<string, string> = {
  draft: "Draft",
  awaiting_approval: "Awaiting approval",
  approved: "Approved",
  done: "Done",
};

function render(): void {
  const status = plan?.status ?? "none";
  app.dataset.status = status;
  app.dataset.version = String(plan?.version ?? 0);
  byId("plan-status").textContent = plan ? (STATUS_LABELS[plan.status] ?? plan.status) : "No plan";
  byId("plan-version").textContent = plan ? `v${plan.version}` : "";
  byId("plan-path").textContent = plan?.path ?? "";
  // Approve and Request changes apply to a draft or a plan awaiting approval, while no turn runs.
  const reviewable = isReviewable();
  const why = !plan ? "There is no plan yet" : !reviewable ? `The plan is ${STATUS_LABELS[plan.status]?.toLowerCase() ?? plan.status}` : running ? "Wait until the agent's turn ends" : "";
  setDisabled(approveFresh, busy || running || !reviewable);
  setDisabled(approve, busy || running || !reviewable);
  setDisabled(approveSteps, busy || running || !reviewable);
  approveSteps.title = why || "Approve and let Baton build each open step in a fresh child session, in order; the build stops at a step that fails";
  setDisabled(byId("request-changes-toggle"), busy || running || !reviewable);
  approveFresh.title =
    why || "Approve and build from the system prompt, your requests, the ledger and this plan; the planning conversation stays one recall away (Ctrl+Shift+Alt+Enter)";
  approve.title = why || "Approve and build with the planning conversation still in view";
  byId("request-changes-toggle").title = why || "Tell the agent what to change in the plan (select text in the plan to annotate lines)";
  if (!reviewable || running) feedbackBox.hidden = true;
  setDisabled(byId("open-file"), plan === null);
  const progress = plan ? countSteps(plan.content) : {};
  // Drawn by the page, not the native <progress>: its empty track looked full in dark
  // and high-contrast themes.
  const bar = byId("plan-progress");
  bar.hidden = !progress.total;
  bar.setAttribute("aria-valuemax", String(progress.total ?? 1));
  bar.setAttribute("aria-valuenow", String(progress.done ?? 0));
  const fraction = progress.total ? (progress.done ?? 0) / progress.total : 0;
  bar.querySelector<HTMLElement>(".progress-fill")?.style.setProperty("width", `${(fraction * 100).toFixed(1)}%`);
  byId("plan-progress-label").textContent = progress.total ? `${progress.done}/${progress.total} done` : "";
  byId("plan-activity").textContent = building
    ? `Building step ${building.index} of ${building.total}: ${building.description}`
    : running && plan?.status === "approved"
      ? "The agent is building the plan…"
      : running
        ? "The agent is working…"
        : "";
  if (plan) {
    setMarkdown(content, plan.content, { sourceLines: true });
    decorateSteps(content);
    renderChanges();
  } else {
    byId("plan-changes").hidden = true;
    content.replaceChildren(el("p", { class: "empty" }, "This session has no plan yet. In plan mode the agent writes one."));
  }
}

function renderChanges(): void {
  const note = byId("plan-changes");
  note.hidden = !plan || !since || tab !== "plan";
  app.dataset.changedSince = plan && since ? String(since.version) : "";
  if (!plan || !since) {
    note.textContent = "";
    return;
  }
  const changes = changedLines(since.content, plan.content);
  const blocks = markChanged(content, changes.lines);
  const removed = changes.removed ? `, ${changes.removed === 1 ? "1 line" : `${changes.removed} lines`} removed` : "";
  note.textContent = `Changed since v${since.version}, the version you last saw here: ${blocks === 1 ? "1 block" : `${blocks} blocks`} marked${removed}.`;
}

/** A new version in view is the one the next revision is compared with. */
function markSeen(): void {
  if (!plan || !inView || document.visibilityState !== "visible") return;
  if (seen?.path === plan.path && seen.version === plan.version && seen.content === plan.content) return;
  seen = { path: plan.path, version: plan.version, content: plan.content };
  save(savedAnnotations(host.getState()?.annotations));
}

/** Send (and Request changes in the review list) follow the overall comment and the annotations. */
function renderSend(): void {
  const stale = review.staleCount;
  const count = review.count;
  const blocked = busy || running || !isReviewable();
  setDisabled(byId("send-feedback"), blocked || stale > 0 || (feedback.value.trim() === "" && count === 0));
  setDisabled(byId("review-send"), blocked || stale > 0);
  byId("feedback-annotations").textContent = stale
    ? `Remove the ${stale === 1 ? "annotation" : `${stale} annotations`} whose lines are no longer in the plan first.`
    : count
      ? `With ${count === 1 ? "1 annotation" : `${count} annotations`} on the plan's lines.`
      : "";
  byId("request-changes-toggle").textContent = count ? `Request changes (${count})` : "Request changes";
}

function renderHistory(): void {
  const list = byId("version-list");
  list.replaceChildren(
    ...[...versions].reverse().map((v) =>
      el(
        "li",
        { "data-version": String(v.version) },
        `v${v.version} · ${v.author} · ${new Date(v.createdAt).toLocaleString()}`,
      ),
    ),
  );
  const options = (selected: number) =>
    versions.map((v) => {
      const option = el("option", { value: String(v.version) }, `v${v.version} (${v.author})`);
      option.selected = v.version === selected;
      return option;
    });
  const latest = versions[versions.length - 1]?.version ?? 0;
  const previous = versions[versions.length - 2]?.version ?? latest;
  fromSelect.replaceChildren(...options(previous));
  toSelect.replaceChildren(...options(latest));
  setDisabled(byId("show-diff"), versions.length < 2);
}

function showTab(next: SavedState["tab"]): void {
  tab = next;
  byId("tab-plan").setAttribute("aria-selected", String(tab === "plan"));
  byId("tab-history").setAttribute("aria-selected", String(tab === "history"));
  content.hidden = tab !== "plan";
  byId("plan-body").hidden = tab !== "plan";
  byId("history").hidden = tab !== "history";
  byId("plan-changes").hidden = tab !== "plan" || !app.dataset.changedSince;
  save(savedAnnotations(host.getState()?.annotations));
}

function planKey(): string {
  return plan ? `${plan.status}@${plan.version}` : "none";
}

function showNotice(level: "info" | "error", message: string): void {
  noticeFor = planKey();
  notice.hidden = false;
  notice.className = `banner ${level}`;
  notice.textContent = message;
}

function requestDiff(from: number, to: number): void {
  wantedDiff = { from, to };
  for (const v of [from, to]) {
    if (!contents.has(v)) host.post({ type: "getVersion", version: v });
  }
  tryRenderDiff();
}

function tryRenderDiff(): void {
  if (!wantedDiff) return;
  const before = contents.get(wantedDiff.from);
  const after = contents.get(wantedDiff.to);
  if (before === undefined || after === undefined) {
    diffOut.textContent = "Loading versions…";
    return;
  }
  const { added, removed } = renderDiff(diffOut, before, after);
  diffOut.dataset.added = String(added);
  diffOut.dataset.removed = String(removed);
}

function handle(message: PlanInbound): void {
  switch (message.type) {
    case "plan":
      plan = message.plan;
      versions = message.versions;
      running = message.running === true;
      if (plan) contents.set(plan.version, plan.content);
      if (plan && `${plan.path}@${plan.version}` !== shown) {
        shown = `${plan.path}@${plan.version}`;
        // Another plan file (the session now follows another plan) is not a revision of the one seen.
        since = seen && seen.path === plan.path && seen.content !== plan.content ? seen : null;
      }
      // The plan's own heading is in the content; the header names the session.
      byId("plan-title").textContent = message.title;
      // A notice is about the plan as it was: once its status or version moved on, it goes.
      if (noticeFor !== undefined && noticeFor !== planKey()) {
        notice.hidden = true;
        noticeFor = undefined;
      }
      render();
      markSeen();
      // Approved or done, the review is over: its annotations can no longer be sent.
      if (plan && (plan.status === "approved" || plan.status === "done")) review.clear();
      review.planChanged();
      renderSend();
      renderHistory();
      return;
    case "versionContent":
      contents.set(message.version, message.content);
      tryRenderDiff();
      return;
    case "versionUnavailable":
      diffOut.textContent = message.message;
      return;
    case "step":
      building = message.step;
      render();
      return;
    case "busy":
      busy = message.busy;
      render();
      review.render();
      renderSend();
      return;
    case "reviewSent":
      review.clear();
      feedback.value = "";
      renderSend();
      return;
    case "notice":
      showNotice(message.level, message.message);
      return;
    case "inView":
      inView = message.visible;
      markSeen();
      return;
  }
}

approveFresh.addEventListener("click", () => {
  if (!busy) host.post({ type: "approve", fresh: true });
});
approveSteps.addEventListener("click", () => {
  if (!busy) host.post({ type: "approve", fresh: false, steps: true });
});
approve.addEventListener("click", () => {
  if (!busy) host.post({ type: "approve", fresh: false });
});
function openFeedback(): void {
  feedbackBox.hidden = false;
  renderSend();
  requestAnimationFrame(() => feedback.focus());
}
byId("request-changes-toggle").addEventListener("click", () => {
  if (feedbackBox.hidden) openFeedback();
  else feedbackBox.hidden = true;
});
byId("review-send").addEventListener("click", openFeedback);
byId("cancel-feedback").addEventListener("click", () => {
  feedbackBox.hidden = true;
});
feedback.addEventListener("input", renderSend);
byId("send-feedback").addEventListener("click", () => {
  const text = feedback.value.trim();
  const annotations = review.sendable;
  if ((!text && annotations.length === 0) || busy || review.staleCount > 0) return;
  // The text and the annotations stay until the host says they arrived (reviewSent).
  host.post({ type: "requestChanges", feedback: text, annotations });
  feedbackBox.hidden = true;
});
byId("open-file").addEventListener("click", () => host.post({ type: "openFile" }));
byId("tab-plan").addEventListener("click", () => showTab("plan"));
byId("tab-history").addEventListener("click", () => showTab("history"));
byId("show-diff").addEventListener("click", () => requestDiff(Number(fromSelect.value), Number(toSelect.value)));

// A version that arrived while the panel was hidden counts as seen once it is in view.
document.addEventListener("visibilitychange", markSeen);
interceptLinks(content, (url) => host.post({ type: "openLink", url }));
host.onMessage(parsePlanInbound, handle);
render();
review.render();
renderSend();
showTab(tab);
host.post({ type: "ready" });
