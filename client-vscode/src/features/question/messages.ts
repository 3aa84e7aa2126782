// The question card's messages between the extension host and the sidebar webview
// (no vscode import: the webview bundle reads these types too).
import type { QuestionOption } from "../../protocol";

/** Host → webview: show a question card; or close it (answered elsewhere, turn cancelled). */
export type QuestionInbound =
  | {
      type: "question";
      requestId: string;
      sessionId: string;
      question: string;
      options: QuestionOption[];
      multiple: boolean;
      allowText: boolean;
      parentId?: string;
      agent?: string;
      /** Who asks, in words, for a child's question ("the plan child: Draft the schema"). */
      asker?: string;
    }
  | { type: "questionClosed"; requestId: string };

export const QUESTION_ANSWER_TYPE = "questionAnswer";

/** Webview → host: the person's answer, or that they dismissed the question. */
export interface QuestionAnswerMessage {
  type: typeof QUESTION_ANSWER_TYPE;
  requestId: string;
  labels: string[];
  text?: string;
  dismissed?: boolean;
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === "string");

export function parseQuestionAnswer(raw: unknown): QuestionAnswerMessage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const m = raw as Record<string, unknown>;
  if (m.type !== QUESTION_ANSWER_TYPE || typeof m.requestId !== "string" || !isStringArray(m.labels)) return undefined;
  if (m.text !== undefined && typeof m.text !== "string") return undefined;
  return {
    type: QUESTION_ANSWER_TYPE,
    requestId: m.requestId,
    labels: m.labels,
    ...(typeof m.text === "string" ? { text: m.text } : {}),
    ...(m.dismissed === true ? { dismissed: true } : {}),
  };
}

export function parseQuestionInbound(raw: unknown): QuestionInbound | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const m = raw as Record<string, unknown>;
  if (m.type === "questionClosed" && typeof m.requestId === "string") return { type: "questionClosed", requestId: m.requestId };
  if (m.type !== "question" || typeof m.requestId !== "string" || typeof m.question !== "string" || !Array.isArray(m.options)) return undefined;
  return raw as QuestionInbound;
}
