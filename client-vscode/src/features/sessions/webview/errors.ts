// A failed turn's error in plain words, with the actions that can fix it. The
// server names the cause (`cause` on the turn's end, `data.cause` on a failed
// request); the title and the actions follow from it, never from the provider's
// name in the message. The raw text (URLs, status codes) stays under "Details".
// The titles are the server's (server/baton/causes.py, checked by the unit tests),
// so `baton run`, ACP editors and the sidebar say the same.
import type { ErrorCause } from "../../../protocol";
import type { SidebarAction } from "../../../shell/messages";

export interface DescribedError {
  title: string;
  actions: Array<{ action: SidebarAction; label: string }>;
}

const SET_KEY = { action: "setKey", label: "Set OpenAI key" } as const;
const LOCAL = { action: "useLocalModel", label: "Use a local model" } as const;
const COMPATIBLE = { action: "useCompatibleServer", label: "Use another server" } as const;
const CHOOSE_MODEL = { action: "chooseModel", label: "Choose a model" } as const;
const RESTART = { action: "restartServer", label: "Restart server" } as const;
const LOG = { action: "showLog", label: "Show log" } as const;

export const CAUSE_TITLES: Record<ErrorCause, string> = {
  rate_limit: "The model server is rate-limiting requests.",
  quota: "The model provider's quota or billing limit is used up.",
  server_error: "The model server had an error.",
  connection_dropped: "The connection to the model server dropped mid-answer.",
  unreachable: "Could not reach the model server.",
  timeout: "The model server did not answer in time.",
  model_not_found: "The model server does not have this model.",
  key_refused: "The model server refused the API key.",
  key_missing: "The model provider needs an API key.",
  model_missing: "No model is chosen for this server.",
  not_configured: "The model server is not fully configured.",
  local_model: "The local model is not set up yet.",
  context_overflow: "The conversation is too long for the model's context window.",
  other: "The turn stopped with an error.",
};

export const CAUSE_ADVICE: Partial<Record<ErrorCause, string>> = {
  rate_limit: "Wait a moment, then retry.",
  server_error: "Retry in a moment.",
  connection_dropped: "The partial answer is kept; retry to ask again.",
  context_overflow: "Compact it, or start a new session.",
};

const CAUSE_ACTIONS: Record<ErrorCause, DescribedError["actions"]> = {
  rate_limit: [LOG],
  quota: [COMPATIBLE, LOCAL, LOG],
  server_error: [LOG],
  connection_dropped: [LOG],
  unreachable: [COMPATIBLE, LOG],
  timeout: [LOG],
  model_not_found: [CHOOSE_MODEL, COMPATIBLE],
  key_refused: [SET_KEY, COMPATIBLE],
  key_missing: [SET_KEY, LOCAL, COMPATIBLE],
  model_missing: [CHOOSE_MODEL, COMPATIBLE],
  not_configured: [COMPATIBLE, SET_KEY, LOCAL],
  local_model: [LOCAL, SET_KEY, COMPATIBLE],
  context_overflow: [LOG],
  other: [LOG],
};

const CAUSES = new Set(Object.keys(CAUSE_TITLES));

export function isErrorCause(value: unknown): value is ErrorCause {
  return typeof value === "string" && CAUSES.has(value);
}

/** The title and actions of an error: by the server's cause when it named one. */
export function describeError(raw: string, cause?: ErrorCause | null): DescribedError {
  const named = cause && cause !== "other" ? cause : undefined;
  if (!named && /server is not running|connection got disposed|pending response rejected|client is not running|^stopped|server stopped/i.test(raw)) {
    return { title: "The Baton server stopped.", actions: [RESTART, LOG] };
  }
  if (!named && /content[_ ]?(policy|filter)|refusal|safety system|flagged/i.test(raw)) {
    return { title: "The model provider refused this request.", actions: [LOG] };
  }
  const found = named ?? causeOfText(raw) ?? "other";
  const retried = /gave up after (\d+) retr/.exec(raw);
  const words = [CAUSE_TITLES[found]];
  if (retried) words.push(`Baton retried ${retried[1]} ${retried[1] === "1" ? "time" : "times"}.`);
  const advice = CAUSE_ADVICE[found];
  if (advice) words.push(advice);
  return { title: words.join(" "), actions: CAUSE_ACTIONS[found] };
}

/**
 * The cause of an error that came without one (an older server, an error the
 * extension itself raised): read from its words, the status before any name.
 */
export function causeOfText(raw: string): ErrorCause | undefined {
  const text = raw.toLowerCase();
  if (/context_length_exceeded|maximum context|context window|exceeds? (the )?(model'?s? )?context|reduce the length|cannot fit the context/.test(text)) return "context_overflow";
  if (/insufficient_quota|billing/.test(text)) return "quota";
  if (/\b40[13]\b|unauthori[sz]ed|invalid_api_key|incorrect api key/.test(text)) return "key_refused";
  if (/\b429\b|rate.?limit|too many requests/.test(text)) return "rate_limit";
  if (/model_not_found|model .{0,80}(not found|does not exist)/.test(text)) return "model_not_found";
  if (/\b5\d\d\b|server_error|overloaded|bad gateway|service unavailable/.test(text)) return "server_error";
  if (/stream broke|partial output|stream ended|incomplete chunked|peer closed|server disconnected|remoteprotocolerror|readerror/.test(text)) return "connection_dropped";
  if (/no response within|timed? ?out|timeout/.test(text)) return "timeout";
  if (/could not connect|unreachable|econnrefused|connection refused|dns/.test(text)) return "unreachable";
  if (/no openai api key|openai_api_key|api[ _-]?key/.test(text)) return "key_missing";
  if (/needs a model|model key is required/.test(text)) return "model_missing";
  if (/local model|model install|modelpath|xllamacpp|baton\[local\]|local provider|gguf/.test(text)) return "local_model";
  if (/needs a base url|baseurl|base url|unknown provider/.test(text)) return "not_configured";
  return undefined;
}
