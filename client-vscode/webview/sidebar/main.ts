// The sidebar agent's webview: sessions, mode, prompt, the streamed
// transcript, permission prompts and cancel. Talks to the host only through
// typed, guarded messages.
import "../shared/elements";
import "./sidebar.css";
import type { SessionInfo } from "../../src/protocol";
import { parseSidebarInbound, type SidebarInbound, type SidebarOutbound } from "../../src/views/sidebar/messages";
import { byId, el, setDisabled } from "../shared/dom";
import { connectHost } from "../shared/vscodeApi";
import { renderPermission } from "./permissions";
import { Transcript } from "./transcript";

interface SavedState {
  activeSessionId: string | null;
  draft?: string;
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
const transcript = new Transcript(byId("transcript"));

let activeSessionId: string | null = host.getState()?.activeSessionId ?? null;
let mode: "build" | "plan" = "build";
let running = false;
let sessions: SessionInfo[] = [];

function save(): void {
  host.setState({ activeSessionId, draft: promptBox.value });
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
  turnStatus.textContent = running ? "Working…" : "";
}

function renderSessions(): void {
  select.replaceChildren(
    ...sessions.map((s) => {
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
      renderSessions();
      render();
      save();
      return;
    case "history":
      activeSessionId = message.sessionId;
      mode = message.mode;
      running = message.running;
      transcript.load(message.messages);
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
    case "permission":
      permissions.append(
        renderPermission(message, (optionId) =>
          host.post({ type: "permissionAnswer", requestId: message.requestId, optionId }),
        ),
      );
      return;
    case "permissionClosed":
      permissions.querySelector(`[data-request-id="${CSS.escape(message.requestId)}"]`)?.remove();
      return;
    case "error":
      transcript.notice("error", message.message);
      return;
  }
}

function send(): void {
  const text = promptBox.value.trim();
  if (!text || !activeSessionId || running) return;
  transcript.user(text);
  running = true;
  promptBox.value = "";
  render();
  save();
  host.post({ type: "prompt", sessionId: activeSessionId, text });
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
select.addEventListener("change", () => {
  if (select.value && select.value !== activeSessionId) host.post({ type: "selectSession", sessionId: select.value });
});

host.onMessage(parseSidebarInbound, handle);
const draft = host.getState()?.draft;
if (draft) promptBox.value = draft;
render();
host.post({ type: "ready", activeSessionId });
