// The `question` tool's question (baton/question/request), asked of the person: as a
// card in the sidebar when it shows (answered by click or number key), else as a quick
// pick. The answer goes back as the request's result; a cancelled turn closes it.
import * as vscode from "vscode";
import type { QuestionRequestParams, QuestionResponse } from "../../protocol";
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";
import { parseQuestionAnswer, QUESTION_ANSWER_TYPE, type QuestionAnswerMessage, type QuestionInbound } from "./messages";

export const QUESTION_REQUEST = "baton/question/request";

/** What the question needs of the sidebar (SidebarProvider). */
export interface QuestionSurface {
  /** Posts to the sidebar's webview; false when it is not showing and ready. */
  postFeature(message: QuestionInbound): boolean;
}

const OWN_WORDS = "$(edit) Answer in your own words…";

export class QuestionHost implements vscode.Disposable {
  private counter = 0;
  private readonly waiting = new Map<string, (answer: QuestionResponse) => void>();

  constructor(
    private readonly sidebar: QuestionSurface,
    /** A child session in words, for a child's question. */
    private readonly describeChild: (sessionId: string) => string | undefined = () => undefined,
  ) {}

  /** The sidebar message this feature owns: the card's answer. */
  register(registry: MessageRegistry): Registration[] {
    return [registry.register<QuestionAnswerMessage>(QUESTION_ANSWER_TYPE, { parse: parseQuestionAnswer, handle: (answer) => this.answer(answer) })];
  }

  private answer(answer: QuestionAnswerMessage): void {
    const resolve = this.waiting.get(answer.requestId);
    if (!resolve) return;
    resolve(answer.dismissed ? { outcome: "cancelled" } : { outcome: "answered", labels: answer.labels, ...(answer.text ? { text: answer.text } : {}) });
  }

  async ask(params: QuestionRequestParams, token: vscode.CancellationToken): Promise<QuestionResponse> {
    if (token.isCancellationRequested) return { outcome: "cancelled" };
    const requestId = `question-${++this.counter}`;
    const asker = params.parentId ? this.describeChild(params.sessionId) ?? `the ${params.agent ?? "task"} child` : undefined;
    const shown = this.sidebar.postFeature({
      type: "question",
      requestId,
      sessionId: params.sessionId,
      question: params.question,
      options: params.options,
      multiple: params.multiple ?? false,
      allowText: params.allowText ?? false,
      ...(params.parentId ? { parentId: params.parentId, agent: params.agent ?? "" } : {}),
      ...(asker ? { asker } : {}),
    });
    if (!shown) return askInQuickPick(params, token, asker);
    return new Promise<QuestionResponse>((resolve) => {
      const finish = (answer: QuestionResponse) => {
        if (!this.waiting.delete(requestId)) return;
        cancel.dispose();
        this.sidebar.postFeature({ type: "questionClosed", requestId });
        resolve(answer);
      };
      const cancel = token.onCancellationRequested(() => finish({ outcome: "cancelled" }));
      this.waiting.set(requestId, finish);
    });
  }

  dispose(): void {
    for (const resolve of [...this.waiting.values()]) resolve({ outcome: "cancelled" });
  }
}

async function askInQuickPick(
  params: QuestionRequestParams,
  token: vscode.CancellationToken,
  asker: string | undefined,
): Promise<QuestionResponse> {
  const items: vscode.QuickPickItem[] = params.options.map((o) => ({ label: o.label, ...(o.description ? { detail: o.description } : {}) }));
  if (params.allowText) items.push({ label: OWN_WORDS });
  const title = `${asker ? `${asker} asks: ` : "Baton asks: "}${params.question}`;
  const picked = params.multiple
    ? await vscode.window.showQuickPick(items, { title, canPickMany: true, ignoreFocusOut: true }, token)
    : await vscode.window.showQuickPick(items, { title, ignoreFocusOut: true }, token);
  const chosen = picked === undefined ? undefined : Array.isArray(picked) ? picked : [picked];
  if (!chosen || chosen.length === 0 || token.isCancellationRequested) return { outcome: "cancelled" };
  const labels = chosen.map((item) => item.label).filter((label) => label !== OWN_WORDS);
  let text: string | undefined;
  if (chosen.some((item) => item.label === OWN_WORDS)) {
    text = await vscode.window.showInputBox({ title, prompt: "Your answer", ignoreFocusOut: true }, token);
    if (text === undefined && labels.length === 0) return { outcome: "cancelled" };
  }
  return { outcome: "answered", labels, ...(text ? { text } : {}) };
}

/** Answers the server's questions for as long as the returned disposable lives. */
export function registerQuestions(
  client: { onServerRequest<P>(method: string, handler: (params: P, token: vscode.CancellationToken) => Promise<unknown>): vscode.Disposable },
  host: QuestionHost,
): vscode.Disposable {
  return vscode.Disposable.from(
    client.onServerRequest<QuestionRequestParams>(QUESTION_REQUEST, (params, token) => host.ask(params, token)),
    host,
  );
}
