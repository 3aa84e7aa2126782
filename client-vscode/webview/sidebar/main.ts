// The sidebar agent's webview: sessions, mode, prompt, the streamed
// transcript, permission prompts and cancel. Talks to the host only through
// typed, guarded messages.
import "../shared/elements";
import "./sidebar.css";
import type { SessionInfo } from "../../src/protocol";
import {
  parseSidebarInbound,
  type SessionInfoView,
  type SidebarInbound,
  type SidebarOutbound,
} from "../../src/views/sidebar/messages";
import type { AttachmentRef } from "../../src/views/sidebar/reviewMessages";
import { byId, el, formatTokens, setDisabled } from "../shared/dom";
import { connectHost } from "../shared/vscodeApi";
import { renderPermission } from "./permissions";
import { ReviewUi } from "./review";
import { Transcript } from "./transcript";

interface SavedState {
  activeSessionId: string | null;
  draft?: string;
  attachments?: AttachmentRef[];
}

const host = connectHost<SidebarOutbound, SavedState>();
const app = byId("app");
const select = byId<HTMLSelectElement>("session-select");
const promptBox = byId<HTMLElement & { value: string }>("prompt");
const sendButton = byId("send");
const cancelButton = byId("cancel");
const turnStatus = byId("turn-status");
const modeLabel = byId("mode-label");
const banner = byId("server-banner");
const permissions = byId("permissions");
const search = byId<HTMLInputElement>("session-search");
const infoBar = byId("session-info");
const transcript = new Transcript(byId("transcript"), (messageId) => {
  if (activeSessionId) host.post({ type: "forkSession", sessionId: activeSessionId, messageId });
});

let activeSessionId: string | null = host.getState()?.activeSessionId ?? null;
// Undo per turn, Diff on changes, attachment chips and @file completion.
const review = new ReviewUi({
  transcript: byId("transcript"),
  attachments: byId("attachments"),
  mentions: byId("mentions"),
  promptBox: byId("prompt"),
  post: (message) => host.post(message),
  sessionId: () => activeSessionId,
  changed: () => save(),
});
let mode: "build" | "plan" = "build";
let running = false;
let sessions: SessionInfo[] = [];
let info: SessionInfoView = {};

function save(): void {
  const attachments = review.attachments;
  host.setState({ activeSessionId, draft: promptBox.value, ...(attachments.length ? { attachments } : {}) });
}

function render(): void {
  app.dataset.mode = mode;
  app.dataset.running = String(running);
  app.dataset.sessionId = activeSessionId ?? "";
  modeLabel.textContent = activeSessionId ? `${mode} mode` : "";
  byId("mode-plan").toggleAttribute("secondary", mode !== "plan");
  byId("mode-build").toggleAttribute("secondary", mode !== "build");
  setDisabled(sendButton, running || !activeSessionId);
  setDisabled(cancelButton, !running);
  setDisabled(byId("compact"), !activeSessionId);
  setDisabled(byId("show-plan"), !activeSessionId);
  for (const id of ["rename-session", "fork-session", "export-session", "pick-model"]) setDisabled(byId(id), !activeSessionId);
  setDisabled(byId("delete-session"), !activeSessionId);
  turnStatus.textContent = running ? "Working…" : "";
}

/** Newest first; the search filters by title (the active session always stays listed). */
function visibleSessions(): SessionInfo[] {
  const needle = search.value.trim().toLowerCase();
  return [...sessions]
    .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0))
    .filter((s) => !needle || s.sessionId === activeSessionId || (s.title || "").toLowerCase().includes(needle));
}

function compact(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1000) return `${Math.round(n / 1000)}k`;
  return String(n);
}

function renderInfo(): void {
  infoBar.hidden = !activeSessionId;
  byId("pick-model").textContent = info.model ?? "Model";
  const meter = byId<HTMLMeterElement>("context-meter");
  const label = byId("context-label");
  if (info.context && info.context.contextWindow > 0) {
    const fraction = Math.min(1, info.context.tokens / info.context.contextWindow);
    meter.value = fraction;
    label.textContent = `${Math.round(fraction * 100)}% of ${compact(info.context.contextWindow)}`;
  } else {
    meter.value = 0;
    label.textContent = "";
  }
  const t = info.tokens;
  byId("token-totals").textContent =
    t && t.requests > 0 ? `in ${formatTokens(t.input)} · cached ${formatTokens(t.cached)} · out ${formatTokens(t.output)}` : "";
  const planLine = byId("plan-line");
  planLine.hidden = !info.plan;
  planLine.textContent = info.plan ? `Plan: ${info.plan.path} · ${info.plan.status.replace("_", " ")} · v${info.plan.version}` : "";
}

function renderSessions(): void {
  select.replaceChildren(
    ...visibleSessions().map((s) => {
      const option = el("option", { value: s.sessionId }, s.title || "Untitled session");
      option.selected = s.sessionId === activeSessionId;
      return option;
    }),
  );
  if (sessions.length === 0) select.append(el("option", { value: "" }, "No sessions yet"));
}

const TURN_ACTIVITY = new Set(["user_message", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"]);

/** The end of a turn arrives twice (the turn_ended update and the prompt's result); show it once. */
function finishTurn(stopReason: string | undefined, error: string | undefined): void {
  if (running) transcript.endTurn(stopReason, error);
  running = false;
  render();
}

function handle(message: SidebarInbound): void {
  switch (message.type) {
    case "server":
      app.dataset.server = message.status;
      banner.hidden = message.status === "running";
      banner.textContent =
        message.status === "failed"
          ? "The Baton server is not running. Use “Baton: Restart Server” after fixing the problem (see “Baton: Show Server Log”)."
          : message.status === "starting"
            ? "Starting the Baton server…"
            : message.status === "stopped"
              ? "The Baton server is stopped."
              : "";
      return;
    case "sessions":
      sessions = message.sessions;
      if (message.activeSessionId) activeSessionId = message.activeSessionId;
      if (activeSessionId && !sessions.some((s) => s.sessionId === activeSessionId)) {
        // The active session was deleted.
        activeSessionId = null;
        info = {};
        transcript.clear();
        renderInfo();
      }
      renderSessions();
      render();
      save();
      return;
    case "history":
      activeSessionId = message.sessionId;
      mode = message.mode;
      running = message.running;
      transcript.load(message.messages);
      review.decorateHistory(message.messages);
      info = {}; // until the host sends this session's sessionInfo
      renderInfo();
      renderSessions();
      render();
      save();
      return;
    case "update": {
      if (message.sessionId !== activeSessionId) return;
      const { update } = message;
      if (update.kind === "mode") mode = update.mode;
      if (update.kind === "turn_ended") {
        finishTurn(update.stopReason, update.error ?? undefined);
        return;
      }
      // A turn the server started itself (after plan approval or feedback) is running too.
      if (TURN_ACTIVITY.has(update.kind)) running = true;
      transcript.apply(update);
      render();
      return;
    }
    case "userMessage":
      if (message.sessionId === activeSessionId) transcript.user(message.text);
      return;
    case "turn":
      if (message.sessionId !== activeSessionId) return;
      if (message.running) {
        running = true;
        render();
      } else {
        finishTurn(message.stopReason, message.error);
      }
      return;
    case "mode":
      if (message.sessionId === activeSessionId) mode = message.mode;
      render();
      return;
    case "permission": {
      const card = renderPermission(message, (optionId) =>
        host.post({ type: "permissionAnswer", requestId: message.requestId, optionId }),
      );
      review.decoratePermission(card, message.toolCall, message.diff);
      permissions.append(card);
      return;
    }
    case "attach":
      review.attach(message.attachment);
      return;
    case "mentionResults":
      review.showMentions(message.query, message.paths);
      return;
    case "messageMarks":
      review.applyMarks(message.sessionId, message.messages);
      return;
    case "permissionClosed":
      permissions.querySelector(`[data-request-id="${CSS.escape(message.requestId)}"]`)?.remove();
      return;
    case "error":
      transcript.notice("error", message.message);
      return;
    case "sessionInfo":
      if (message.sessionId !== activeSessionId) return;
      info = message.info;
      renderInfo();
      return;
    case "forkPoint":
      if (message.sessionId === activeSessionId && !running) transcript.addForkPoint(message.messageId);
      return;
  }
}

function send(): void {
  const text = promptBox.value.trim();
  if (!text || !activeSessionId || running) return;
  transcript.user(text);
  const attachments = review.take();
  review.showSent(attachments);
  running = true;
  promptBox.value = "";
  render();
  save();
  host.post({ type: "prompt", sessionId: activeSessionId, text, ...(attachments.length ? { attachments } : {}) });
}

function setMode(next: "build" | "plan"): void {
  if (!activeSessionId || next === mode) return;
  host.post({ type: "setMode", sessionId: activeSessionId, mode: next });
}

sendButton.addEventListener("click", send);
cancelButton.addEventListener("click", () => {
  if (activeSessionId) host.post({ type: "cancel", sessionId: activeSessionId });
});
promptBox.addEventListener("keydown", (event: KeyboardEvent) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    send();
  }
});
promptBox.addEventListener("input", save);
byId("new-session").addEventListener("click", () => host.post({ type: "newSession", mode }));
byId("mode-plan").addEventListener("click", () => setMode("plan"));
byId("mode-build").addEventListener("click", () => setMode("build"));
byId("show-plan").addEventListener("click", () => {
  if (activeSessionId) host.post({ type: "showPlan", sessionId: activeSessionId });
});
byId("compact").addEventListener("click", () => {
  if (activeSessionId) host.post({ type: "compact", sessionId: activeSessionId });
});
search.addEventListener("input", renderSessions);
const sessionAction = (type: "renameSession" | "deleteSession" | "forkSession" | "exportSession" | "pickModel") => () => {
  if (activeSessionId) host.post({ type, sessionId: activeSessionId });
};
byId("rename-session").addEventListener("click", sessionAction("renameSession"));
byId("delete-session").addEventListener("click", sessionAction("deleteSession"));
byId("fork-session").addEventListener("click", sessionAction("forkSession"));
byId("export-session").addEventListener("click", sessionAction("exportSession"));
byId("pick-model").addEventListener("click", sessionAction("pickModel"));
byId("plan-line").addEventListener("click", (event) => {
  event.preventDefault();
  if (activeSessionId) host.post({ type: "showPlan", sessionId: activeSessionId });
});
select.addEventListener("change", () => {
  if (select.value && select.value !== activeSessionId) host.post({ type: "selectSession", sessionId: select.value });
});

host.onMessage(parseSidebarInbound, handle);
const draft = host.getState()?.draft;
if (draft) promptBox.value = draft;
review.setAttachments(host.getState()?.attachments ?? []);
render();
host.post({ type: "ready", activeSessionId });
