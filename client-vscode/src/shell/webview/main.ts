// The sidebar agent's webview: the session picker and context meter, a welcome
// state, the streamed transcript, permission prompts and the composer (mode,
// model, Send / Stop). Talks to the host only through typed, guarded messages.
import "./shared/elements";
import "./sidebar.css";
import type { ErrorCause, SessionInfo } from "../../protocol";
import {
  needsServerModel,
  parseSidebarInbound,
  SIDEBAR_ACTIONS,
  type SessionInfoView,
  type SetupView,
  type SidebarAction,
  type SidebarInbound,
  type SidebarOutbound,
  type TrustView,
} from "../messages";
import type { AttachmentRef } from "../../features/review/messages";
import { parentOf, parseChildProgress } from "../../features/children/childMessages";
import { byId, el, formatTokens, setDisabled } from "./shared/dom";
import { interceptLinks } from "./shared/links";
import { connectHost } from "./shared/vscodeApi";
import { ChildCards } from "../../features/children/webview/childCards";
import { contextLine, contextTooltip } from "../../features/compaction/webview/contextMeter";
import { markEdited, renderPermission } from "../../features/permissions/webview/permissionCard";
import { installQuestionCards } from "../../features/question/webview/questionCard";
import { foldRetriedAttempts } from "../../features/sessions/webview/attempts";
import { ReviewUi } from "../../features/review/webview/reviewUi";
import { SlashMenu } from "../../features/composer/webview/slashMenu";
import { ComposerBar } from "../../features/composer/webview/composerBar";
import { ImageChips } from "../../features/composer/webview/imageChips";
import { parseCommands } from "../../features/composer/commandMessages";
import { Transcript } from "../../features/sessions/webview/transcript";
import { makeSingleTabStop } from "../../features/sessions/webview/transcriptFocus";

interface SavedState {
  activeSessionId: string | null;
  draft?: string;
  attachments?: AttachmentRef[];
  mode?: "build" | "plan";
}

const host = connectHost<SidebarOutbound, SavedState>();
const app = byId("app");
const select = byId<HTMLSelectElement>("session-select");
const promptBox = byId<HTMLElement & { value: string }>("prompt");
const sendButton = byId("send");
const cancelButton = byId("cancel");
const turnStatus = byId("turn-status");
const banner = byId("server-banner");
const permissions = byId("permissions");
const welcome = byId("welcome");
const sendReason = byId("send-reason");
const transcriptRoot = byId("transcript");
// The question card is a feature of its own: its messages are not the sidebar's.
installQuestionCards(permissions, (message) => host.post(message as unknown as SidebarOutbound));

const isAction = (value: string | undefined): value is SidebarAction =>
  value !== undefined && (SIDEBAR_ACTIONS as readonly string[]).includes(value);
const runAction = (action: SidebarAction) => host.post({ type: "action", action });
// The server's models the welcome shows as buttons; the rest are one click away in the picker.
const MAX_WELCOME_MODELS = 8;

makeSingleTabStop(transcriptRoot);
const transcript = new Transcript(transcriptRoot, {
  fork: (messageId) => {
    if (activeSessionId) host.post({ type: "forkSession", sessionId: activeSessionId, messageId });
  },
  retry: () => {
    if (!activeSessionId || running) return;
    running = true;
    render();
    host.post({ type: "retry", sessionId: activeSessionId });
  },
  action: runAction,
  changed: () => renderWelcome(),
  taskResult: (result) => children.summarise(result),
});

// Child sessions: a card under each `task` call; Stop cancels that child only.
const children = new ChildCards(transcriptRoot, {
  stop: (childId) => host.post({ type: "cancel", sessionId: childId }),
  open: (childId) => host.post({ type: "openChild", sessionId: childId }),
  history: (childId) => host.post({ type: "childHistory", sessionId: childId }),
  // The host asks first (Undo Turn's dialog), then reverts from the step's note.
  undo: (messageId) => {
    if (activeSessionId) host.post({ type: "revert", sessionId: activeSessionId, messageId });
  },
});

const saved = host.getState();
let activeSessionId: string | null = saved?.activeSessionId ?? null;
// Undo per turn, Diff on changes, attachment chips and @file completion.
const review = new ReviewUi({
  transcript: transcriptRoot,
  attachments: byId("attachments"),
  mentions: byId("mentions"),
  promptBox: byId("prompt"),
  post: (message) => host.post(message),
  sessionId: () => activeSessionId,
  changed: () => save(),
});
// `/` at the start of the prompt box: the commands, built-ins and skills.
const slash = new SlashMenu({
  promptBox: byId("prompt"),
  list: byId("slash-menu"),
  post: (message) => host.post(message),
  changed: () => save(),
});
// The bar fits the sidebar's width: Stop or Send (whichever cannot be used now), then the
// model picker, give way to the "…" menu before any label is cut.
const composerBar = new ComposerBar({
  bar: byId("composer-bar"),
  more: byId("composer-more"),
  menu: byId("composer-menu"),
  collapseOrder: () => [
    // While the agent works both Stop and Queue are of use: the model picker goes first.
    ...(running ? [] : [{ node: cancelButton, label: () => "Stop" }]),
    { node: byId("pick-model"), label: () => `Model: ${info.model ?? "choose…"}` },
  ],
  actions: [{ id: "attach-image", label: "Attach image…", run: () => byId<HTMLInputElement>("image-file").click() }],
});
// Images for the next prompt: pasted, dropped or picked; not for a model that takes none.
const imageProblem = byId("image-problem");
const images = new ImageChips({
  root: byId("image-chips"),
  refusal: () => (info.provider === "local" ? "The local model does not take images: choose another model to send them." : undefined),
  problem: (text) => {
    imageProblem.textContent = text;
    imageProblem.hidden = false;
  },
});
function addImages(files: Iterable<File>): void {
  imageProblem.hidden = true;
  void images.add(files);
}
let mode: "build" | "plan" = saved?.mode ?? "build";
let running = false;
/** What the person said while the agent works, waiting on the server (its `queue` updates). */
let queued: Array<{ id: string; text: string; delivery: "steer" | "after_turn" }> = [];
const queueList = byId("queued");
const queueDelivery = byId<HTMLSelectElement>("queue-delivery");
let serverStatus = "starting";
let sessions: SessionInfo[] = [];
let info: SessionInfoView = {};
let setup: SetupView | undefined;

function save(): void {
  const attachments = review.attachments;
  host.setState({ activeSessionId, draft: promptBox.value, mode, ...(attachments.length ? { attachments } : {}) });
}

/** Why Send cannot be used now (shown under the composer), or undefined when it can. */
function sendBlocked(): string | undefined {
  if (running) return undefined; // Stop is the action; the status says "Working…"
  if (serverStatus === "failed") return "The Baton server is not running: restart it above. Your prompt is kept.";
  if (serverStatus === "stopped") return "The Baton server is stopped: restart it above. Your prompt is kept.";
  if (serverStatus === "starting") return "Starting the Baton server…";
  return undefined;
}

function render(): void {
  app.dataset.mode = mode;
  app.dataset.running = String(running);
  app.dataset.sessionId = activeSessionId ?? "";
  byId("mode-plan").setAttribute("aria-checked", String(mode === "plan"));
  byId("mode-build").setAttribute("aria-checked", String(mode === "build"));
  const blocked = sendBlocked();
  // While the agent works Send queues: the message waits for the agent's next step or the turn's end.
  setDisabled(sendButton, (running && !activeSessionId) || blocked !== undefined);
  sendButton.textContent = running ? "Queue" : "Send";
  sendButton.title = blocked ?? (running ? "Queue it: the agent reads it as chosen above (Enter)" : "Send (Enter)");
  sendReason.hidden = blocked === undefined;
  sendReason.textContent = blocked ?? "";
  setDisabled(cancelButton, !running);
  setDisabled(byId("pick-model"), serverStatus !== "running");
  byId("pick-model").title = activeSessionId
    ? "Choose the model for this session's next requests"
    : "Choose the model for a new session (it starts now, in the mode shown)";
  const step = activeSessionId ? children.currentStep(activeSessionId) : undefined;
  turnStatus.textContent = step ? `Building step ${step.index} of ${step.total}…` : running ? "Working…" : "";
  composerBar.fit();
  renderWelcome();
  renderQueue();
}

function renderWelcome(): void {
  // The welcome state shows until the session has something in it.
  welcome.hidden = serverStatus === "failed" || transcriptRoot.childElementCount > 0 || running;
  const line = byId("welcome-model");
  if (!setup) {
    line.textContent = "";
  } else if (setup.provider === "local") {
    line.textContent = "Baton is set to use the local model. If it is not installed yet, choose below.";
  } else if (setup.provider === "openai-compatible" && !needsServerModel(setup)) {
    line.textContent = `Baton is set to use ${setup.model} on an OpenAI-compatible server${setup.baseUrl ? ` at ${setup.baseUrl}` : ""}.`;
  } else if (setup.hasKey || setup.provider === "openai") {
    line.textContent = "Baton will use OpenAI with your key. To use another model, choose below.";
  } else if (setup.baseUrl) {
    const from = setup.baseUrlFrom === "environment" ? " (OPENAI_BASE_URL)" : "";
    line.textContent = setup.model
      ? `Baton will use ${setup.model} on the OpenAI-compatible server at ${setup.baseUrl}${from}.`
      : setup.serverModels?.length
        ? `Baton will use the OpenAI-compatible server at ${setup.baseUrl}${from}. Choose its model for this workspace:`
        : `Baton will use the OpenAI-compatible server at ${setup.baseUrl}${from}. It needs a model: choose one${setup.serverModelsError ? ` (the server's list is unavailable: ${setup.serverModelsError})` : ""}.`;
  } else {
    line.textContent = "No model is set up yet. Choose one (you can also just send: Baton tries the local model).";
  }
  renderServerModels();
}

/** The server's models as buttons, while none is chosen: one click makes it the workspace's. */
function renderServerModels(): void {
  const list = byId("welcome-models");
  const models = setup && needsServerModel(setup) ? (setup.serverModels ?? []) : [];
  const needed = Boolean(setup && needsServerModel(setup));
  list.hidden = !needed;
  list.replaceChildren();
  if (!needed) return;
  for (const model of models.slice(0, MAX_WELCOME_MODELS)) {
    const button = el("button", { type: "button", class: "choice model-choice", "data-model": model }, model);
    button.addEventListener("click", () => host.post({ type: "useModel", model }));
    list.append(button);
  }
  // More than fit, or none listed: the picker (with "Enter a model id…").
  if (models.length > MAX_WELCOME_MODELS || models.length === 0) {
    const more = el("button", { type: "button", class: "choice model-choice", "data-model-more": "" }, models.length ? `All ${models.length} models…` : "Choose a model…");
    more.addEventListener("click", () => runAction("chooseModel"));
    list.append(more);
  }
}

function renderInfo(): void {
  byId("pick-model").textContent = info.model ? `${info.model} ▾` : "Model ▾";
  composerBar.fit();
  const meter = byId("context-meter");
  const context = byId("context");
  const line = contextLine(info);
  // Drawn by the page, not the native <meter>: its empty track looked full in dark and
  // high-contrast themes.
  meter.dataset.fraction = String(line.fraction);
  meter.dataset.level = line.fraction >= 0.9 ? "full" : line.fraction >= 0.75 ? "high" : "ok";
  meter.setAttribute("aria-valuenow", String(Math.round(line.fraction * 100)));
  meter.querySelector<HTMLElement>(".meter-fill")?.style.setProperty("width", `${(line.fraction * 100).toFixed(1)}%`);
  byId("context-label").textContent = line.label;
  context.hidden = !activeSessionId;
  context.title = contextTooltip(info);
  const planLine = byId("plan-line");
  planLine.hidden = !info.plan;
  if (info.plan) {
    const progress = info.plan.total ? ` · ${info.plan.done ?? 0}/${info.plan.total} done` : "";
    // "building" only while a turn runs: after the build ends the plan is approved, with
    // its progress (plan_done makes it done).
    const status = info.plan.status === "approved" && !running ? "approved" : (PLAN_STATUS[info.plan.status] ?? info.plan.status);
    planLine.textContent = `Plan: ${status}${progress}`;
    planLine.title = `${info.plan.path} (version ${info.plan.version}). Click to open the plan.`;
  }
}

const PLAN_STATUS: Record<string, string> = {
  draft: "draft",
  awaiting_approval: "waiting for your approval",
  approved: "approved, building",
  done: "done",
};

function renderSessions(): void {
  // A child session is reached from its card under the parent's `task` call.
  const sorted = sessions.filter((s) => !parentOf(s) || s.sessionId === activeSessionId).sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  select.replaceChildren(
    ...sorted.map((s) => {
      const option = el("option", { value: s.sessionId }, s.title || "Untitled session");
      // The native list shows titles; the tooltip says which session it is.
      const used = s.usage?.requests ? `${formatTokens((s.usage.inputTokens ?? 0) + (s.usage.outputTokens ?? 0))} tokens` : "";
      option.title = [s.firstPrompt, used, `last active ${s.updatedAt}`].filter(Boolean).join(" · ");
      option.selected = s.sessionId === activeSessionId;
      return option;
    }),
  );
  if (sessions.length === 0 || !activeSessionId) {
    const option = el("option", { value: "" }, sessions.length === 0 ? "New session" : "Choose a session");
    option.selected = !activeSessionId;
    select.prepend(option);
  }
}

const TURN_ACTIVITY = new Set(["user_message", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"]);

/** The end of a turn arrives twice (the turn_ended update and the prompt's result); show it once. */
function finishTurn(stopReason: string | undefined, error: string | undefined, cause?: ErrorCause | null): void {
  if (running) transcript.endTurn(stopReason, error, true, cause);
  // A step-by-step build says how it ended under its last step's card; reloaded, its
  // cards know their step notes (Undo from a step, or the whole build).
  if (activeSessionId && children.stepsRan(activeSessionId)) host.post({ type: "selectSession", sessionId: activeSessionId });
  if (activeSessionId) children.closeBuild(activeSessionId);
  else transcript.endMessage();
  running = false;
  render();
  renderInfo();
}

function showServer(status: string): void {
  serverStatus = status;
  app.dataset.server = status;
  banner.hidden = status === "running" || status === "starting";
  byId("server-banner-text").textContent =
    status === "failed"
      ? "The Baton server is not running. Restart it, or check the log and the Python interpreter it uses."
      : status === "stopped"
        ? "The Baton server is stopped."
        : "";
  byId("banner-python").hidden = status !== "failed";
  render();
}

/** Restricted Mode: the banner lists what the server ignores; nothing lost, no banner. */
function showTrust(trust: TrustView | null): void {
  const trustBanner = byId("trust-banner");
  const restricted = trust !== null && !trust.trusted && trust.ignored.length > 0;
  trustBanner.hidden = !restricted;
  app.dataset.trusted = trust === null ? "" : String(trust.trusted);
  byId("trust-ignored").replaceChildren(...(restricted ? trust.ignored.map((item) => el("li", {}, item)) : []));
  trustBanner.title = restricted && trust.message ? trust.message : "";
}

function handle(message: SidebarInbound): void {
  switch (message.type) {
    case "server":
      showServer(message.status);
      return;
    case "setup":
      setup = message.setup;
      renderWelcome();
      return;
    case "focusPrompt":
      promptBox.focus();
      return;
    case "trust":
      showTrust(message.trust);
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
      // Another session's queue is not this one's (its next `queue` update says what waits).
      if (message.sessionId !== activeSessionId) queued = [];
      activeSessionId = message.sessionId;
      mode = message.mode;
      running = message.running;
      transcript.load(message.messages, message.turns ?? [], message.notices ?? []);
      review.decorateHistory(message.messages);
      children.restore(message.sessionId, message.messages);
      if (!message.running) children.closeBuild(message.sessionId);
      foldRetriedAttempts(transcriptRoot);
      info = {}; // until the host sends this session's sessionInfo
      renderInfo();
      renderSessions();
      render();
      save();
      return;
    case "update": {
      const child = parseChildProgress(message.update);
      if (child) {
        children.apply(message.sessionId, child, message.sessionId === activeSessionId);
        // A step Baton builds runs as the session's turn: Stop (the composer's) ends the build.
        if (child.status === "running" && message.sessionId === activeSessionId) running = true;
        render();
        return;
      }
      if (message.sessionId !== activeSessionId) {
        children.own(message.sessionId, message.update);
        return;
      }
      const { update } = message;
      if (update.kind === "mode") mode = update.mode;
      if (update.kind === "skills") slash.setCommands(parseCommands(update.commands) ?? []);
      if (update.kind === "queue") {
        queued = update.queued.map((q) => ({ id: q.id, text: q.text, delivery: q.delivery }));
        renderQueue();
        return;
      }
      if (update.kind === "turn_ended") {
        finishTurn(update.stopReason, update.error ?? undefined, update.cause);
        return;
      }
      // A turn the server started itself (after plan approval or feedback) is running too.
      if (TURN_ACTIVITY.has(update.kind) && !running) {
        running = true;
        renderInfo();
      }
      transcript.apply(update);
      render();
      return;
    }
    case "userMessage":
      if (message.sessionId === activeSessionId) {
        transcript.user(message.text);
        foldRetriedAttempts(transcriptRoot);
        running = true;
        render();
      }
      return;
    case "childHistory":
      children.showHistory(message.sessionId, message.messages);
      return;
    case "turn":
      if (message.sessionId !== activeSessionId) return;
      if (message.running) {
        // A new turn: its answer never continues the last one's.
        transcript.endMessage();
        running = true;
        render();
      } else {
        finishTurn(message.stopReason, message.error, message.cause);
      }
      return;
    case "mode":
      if (message.sessionId === activeSessionId) mode = message.mode;
      render();
      save();
      return;
    case "permission": {
      const card = renderPermission(message, (optionId) =>
        host.post({ type: "permissionAnswer", requestId: message.requestId, optionId }),
      );
      review.decoratePermission(card, message.toolCall, message.diff);
      card.dataset.forCall = message.toolCall.toolCallId;
      if (message.parentId) children.labelPermission(card, message.sessionId, { parentId: message.parentId, agent: message.agent ?? "" });
      transcript.askingPermission(message.toolCall.toolCallId, true);
      permissions.append(card);
      card.querySelector<HTMLElement>("[data-default]")?.focus();
      return;
    }
    case "attach":
      review.attach(message.attachment);
      return;
    case "mentionResults":
      review.showMentions(message.query, message.paths);
      return;
    case "commands":
      slash.setCommands(message.commands);
      return;
    case "messageMarks":
      review.applyMarks(message.sessionId, message.messages);
      foldRetriedAttempts(transcriptRoot);
      return;
    case "permissionEdited": {
      const card = permissions.querySelector<HTMLElement>(`[data-for-call="${CSS.escape(message.toolCallId)}"]`);
      if (card) markEdited(card, message.edited);
      return;
    }
    case "permissionClosed": {
      const card = permissions.querySelector<HTMLElement>(`[data-request-id="${CSS.escape(message.requestId)}"]`);
      if (card?.dataset.forCall) transcript.askingPermission(card.dataset.forCall, false);
      if (card?.dataset.forChild) children.setAsking(card.dataset.forChild, false);
      card?.remove();
      return;
    }
    case "error":
      transcript.error(message.message);
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

/** While the agent works: what the person says waits on the server, shown as queued. */
function queue(text: string): void {
  if (!activeSessionId) return;
  const delivery = queueDelivery.value === "after_turn" ? "after_turn" : "steer";
  host.post({ type: "queue", sessionId: activeSessionId, text, delivery });
  promptBox.value = "";
  save();
}

function renderQueue(): void {
  queueList.replaceChildren(
    ...queued.map((q) => {
      const remove = el("button", { type: "button", class: "queued-remove", title: "Take it back: it will not reach the agent", "aria-label": `Take back: ${q.text}` }, "✕");
      remove.addEventListener("click", () => {
        if (activeSessionId) host.post({ type: "unqueue", sessionId: activeSessionId, id: q.id });
      });
      return el(
        "li",
        { class: "queued-item", "data-queued-id": q.id, "data-delivery": q.delivery },
        el("span", { class: "queued-text" }, q.text),
        el("span", { class: "queued-when" }, q.delivery === "steer" ? "queued · next step" : "queued · after the turn"),
        remove,
      );
    }),
  );
  byId("queue").hidden = !running && queued.length === 0;
}

function send(): void {
  const text = promptBox.value.trim();
  if (text && running && activeSessionId && !slash.builtin(text)) {
    queue(text);
    return;
  }
  if (!text || running || sendBlocked() !== undefined) return;
  const builtin = slash.builtin(text);
  if (builtin) {
    // `/compact`, `/plan` …: the host runs them on its own commands.
    promptBox.value = "";
    host.post({ type: "builtinCommand", sessionId: activeSessionId, name: builtin[0], arguments: builtin[1] });
    save();
    return;
  }
  const attachments = review.take();
  const sentImages = images.take();
  imageProblem.hidden = true;
  running = true;
  promptBox.value = "";
  if (activeSessionId) {
    transcript.user(text);
    review.showSent(attachments, sentImages.map((i) => i.name));
    host.post({ type: "prompt", sessionId: activeSessionId, text, ...(attachments.length ? { attachments } : {}), ...(sentImages.length ? { images: sentImages } : {}) });
  } else {
    // No session yet: the host starts one in this mode, shows the prompt and sends it.
    host.post({ type: "prompt", sessionId: null, text, mode, ...(attachments.length ? { attachments } : {}), ...(sentImages.length ? { images: sentImages } : {}) });
  }
  render();
  save();
}

function setMode(next: "build" | "plan"): void {
  if (next === mode) return;
  if (!activeSessionId) {
    // Before the first prompt the mode is the new session's.
    mode = next;
    render();
    save();
    return;
  }
  host.post({ type: "setMode", sessionId: activeSessionId, mode: next });
}

sendButton.addEventListener("click", send);
cancelButton.addEventListener("click", () => {
  if (activeSessionId) host.post({ type: "cancel", sessionId: activeSessionId });
});
promptBox.addEventListener("keydown", (event: KeyboardEvent) => {
  // Enter sends (Ctrl/Cmd+Enter too); Shift+Enter is a new line. The @-completion list takes Enter first.
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  } else if (event.key === "Escape" && running && activeSessionId) {
    host.post({ type: "cancel", sessionId: activeSessionId });
  }
});
promptBox.addEventListener("input", save);
promptBox.addEventListener("paste", (event: ClipboardEvent) => {
  const files = [...(event.clipboardData?.files ?? [])].filter((f) => f.type.startsWith("image/"));
  if (files.length === 0) return; // text pastes as text
  event.preventDefault();
  addImages(files);
});
const composer = document.querySelector<HTMLElement>(".composer");
composer?.addEventListener("dragover", (event: DragEvent) => {
  if (![...(event.dataTransfer?.items ?? [])].some((i) => i.kind === "file")) return;
  event.preventDefault();
  composer.dataset.dropping = "";
});
composer?.addEventListener("dragleave", () => delete composer.dataset.dropping);
composer?.addEventListener("drop", (event: DragEvent) => {
  delete composer.dataset.dropping;
  const files = [...(event.dataTransfer?.files ?? [])].filter((f) => f.type.startsWith("image/"));
  if (files.length === 0) return;
  event.preventDefault();
  addImages(files);
});
byId<HTMLInputElement>("image-file").addEventListener("change", (event) => {
  const input = event.target as HTMLInputElement;
  addImages([...(input.files ?? [])]);
  input.value = "";
});
byId("mode-plan").addEventListener("click", () => setMode("plan"));
byId("mode-build").addEventListener("click", () => setMode("build"));
byId("context").addEventListener("click", () => {
  if (activeSessionId) host.post({ type: "contextMenu", sessionId: activeSessionId });
});
byId("pick-model").addEventListener("click", () => {
  host.post(activeSessionId ? { type: "pickModel", sessionId: activeSessionId } : { type: "pickModel", sessionId: null, mode });
});
byId("plan-line").addEventListener("click", (event) => {
  event.preventDefault();
  if (activeSessionId) host.post({ type: "showPlan", sessionId: activeSessionId });
});
select.addEventListener("change", () => {
  if (select.value && select.value !== activeSessionId) host.post({ type: "selectSession", sessionId: select.value });
});
// The banner's and the welcome state's buttons each name one fixed action.
for (const button of document.querySelectorAll<HTMLElement>("[data-action]")) {
  button.addEventListener("click", () => {
    const action = button.dataset.action;
    if (isAction(action)) runAction(action);
  });
}
interceptLinks(document.body, (url) => host.post({ type: "openLink", url }));
transcriptRoot.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest<HTMLElement>("[data-code-action]") : null;
  const code = button?.closest(".code-block")?.querySelector("code")?.textContent;
  const action = button?.dataset.codeAction;
  if (code == null || (action !== "copy" && action !== "insert")) return;
  host.post({ type: "codeAction", action, text: code });
});

host.onMessage(parseSidebarInbound, handle);
const draft = saved?.draft;
if (draft) promptBox.value = draft;
review.setAttachments(saved?.attachments ?? []);
renderInfo();
render();
host.post({ type: "ready", activeSessionId });
