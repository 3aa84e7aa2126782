// The question card: the agent asks the person one question with a few options.
// Click an option or press its number to answer; with several allowed, numbers and
// clicks tick options and Enter (or Answer) sends them; with own words allowed, a
// text field sends what is typed. Escape dismisses the question (the agent is told
// no answer came). Every word is the model's, so it goes in as text, control
// characters made visible.
import type { QuestionAnswerMessage, QuestionInbound } from "../messages";
import { parseQuestionInbound } from "../messages";
import { el } from "../../../shell/webview/shared/dom";
import { visibleNodes } from "../../../shell/webview/shared/visible";
import "./question.css";

type QuestionPrompt = Extract<QuestionInbound, { type: "question" }>;

export function renderQuestion(prompt: QuestionPrompt, answer: (message: QuestionAnswerMessage) => void): HTMLElement {
  const card = el("div", {
    class: "permission question",
    "data-request-id": prompt.requestId,
    role: "alertdialog",
    "aria-label": `Question: ${prompt.question}`,
    tabindex: "-1",
  });
  if (prompt.asker) card.append(el("div", { class: "permission-asker" }, "Asked by ", ...visibleNodes(prompt.asker)));
  card.append(el("div", { class: "permission-title question-text" }, ...visibleNodes(prompt.question)));
  const picked = new Set<string>();
  const buttons = el("div", { class: "question-options", role: prompt.multiple ? "group" : "radiogroup", "aria-label": "Options" });
  const text = prompt.allowText
    ? el("input", { type: "text", class: "question-own-words", placeholder: "Or answer in your own words…", "aria-label": "Your own answer" })
    : undefined;
  const send = (labels: string[], dismissed = false) => {
    if (card.dataset.answered) return;
    card.dataset.answered = dismissed ? "dismissed" : "answered";
    for (const control of card.querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input")) control.disabled = true;
    const words = text?.value.trim();
    answer({ type: "questionAnswer", requestId: prompt.requestId, labels, ...(words && !dismissed ? { text: words } : {}), ...(dismissed ? { dismissed: true } : {}) });
  };
  const toggle = (label: string, button: HTMLElement) => {
    if (picked.has(label)) picked.delete(label);
    else picked.add(label);
    button.setAttribute("aria-pressed", String(picked.has(label)));
  };
  prompt.options.forEach((option, index) => {
    const number = index + 1;
    const button = el(
      "button",
      {
        type: "button",
        class: "permission-option question-option",
        "aria-keyshortcuts": String(number),
        ...(prompt.multiple ? { "aria-pressed": "false" } : {}),
        ...(option.description ? { title: option.description } : {}),
      },
      el("span", { class: "permission-key", "aria-hidden": "true" }, String(number)),
      el("span", { class: "permission-label" }, ...visibleNodes(option.label)),
      ...(option.description ? [el("span", { class: "question-description" }, ...visibleNodes(option.description))] : []),
    );
    button.dataset.label = option.label;
    button.addEventListener("click", () => (prompt.multiple ? toggle(option.label, button) : send([option.label])));
    buttons.append(button);
  });
  card.append(buttons);
  const needsSubmit = prompt.multiple || prompt.allowText;
  if (text) card.append(text);
  const actions = el("div", { class: "permission-actions" });
  if (needsSubmit) {
    const submit = el("button", { type: "button", class: "permission-option allow_once question-submit" }, "Answer");
    submit.addEventListener("click", () => send(prompt.options.map((o) => o.label).filter((l) => picked.has(l))));
    actions.append(submit);
  }
  const dismiss = el("button", { type: "button", class: "permission-option reject_once question-dismiss", title: "Close without answering (Escape)" }, "Skip");
  dismiss.addEventListener("click", () => send([], true));
  actions.append(dismiss);
  card.append(actions);
  card.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Escape") {
      event.preventDefault();
      send([], true);
      return;
    }
    if (event.target === text) {
      if (event.key === "Enter") {
        event.preventDefault();
        send(prompt.options.map((o) => o.label).filter((l) => picked.has(l)));
      }
      return;
    }
    if (event.key === "Enter" && needsSubmit) {
      event.preventDefault();
      send(prompt.options.map((o) => o.label).filter((l) => picked.has(l)));
      return;
    }
    const option = /^[1-9]$/.test(event.key) ? prompt.options[Number(event.key) - 1] : undefined;
    if (!option) return;
    event.preventDefault();
    const button = buttons.querySelector<HTMLElement>(`[data-label="${CSS.escape(option.label)}"]`);
    if (prompt.multiple && button) toggle(option.label, button);
    else send([option.label]);
  });
  const keys = `1–${Math.min(9, prompt.options.length)}`;
  card.append(
    el(
      "div",
      { class: "permission-hint", "aria-hidden": "true" },
      prompt.multiple ? `${keys}: tick · Enter: answer · Esc: skip` : `${keys} or click: answer · Esc: skip`,
    ),
  );
  return card;
}

/** Shows the host's questions in `container` and sends the answers back with `post`. */
export function installQuestionCards(container: HTMLElement, post: (message: QuestionAnswerMessage) => void): void {
  window.addEventListener("message", (event: MessageEvent<unknown>) => {
    const message = parseQuestionInbound(event.data);
    if (!message) return;
    if (message.type === "questionClosed") {
      container.querySelector(`.question[data-request-id="${CSS.escape(message.requestId)}"]`)?.remove();
      return;
    }
    const card = renderQuestion(message, post);
    container.append(card);
    card.focus();
  });
}
