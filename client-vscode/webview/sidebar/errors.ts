// A failed turn's error in plain words, with the actions that can fix it. The
// raw text (URLs, status codes) stays available under "Details".
import type { SidebarAction } from "../../src/views/sidebar/messages";

export interface DescribedError {
  title: string;
  actions: Array<{ action: SidebarAction; label: string }>;
}

const SET_KEY = { action: "setKey", label: "Set OpenAI key" } as const;
const LOCAL = { action: "useLocalModel", label: "Use a local model" } as const;
const COMPATIBLE = { action: "useCompatibleServer", label: "Use another server" } as const;
const RESTART = { action: "restartServer", label: "Restart server" } as const;
const LOG = { action: "showLog", label: "Show log" } as const;

export function describeError(raw: string): DescribedError {
  const text = raw.toLowerCase();
  if (/api[ _-]?key|401|unauthori[sz]ed|authenticat|invalid_api_key|openai_api_key|incorrect api key/.test(text)) {
    return { title: "The model provider needs a valid API key.", actions: [SET_KEY, LOCAL, COMPATIBLE] };
  }
  if (/local model|model install|modelpath|xllamacpp|baton\[local\]|local provider|gguf/.test(text)) {
    return { title: "The local model is not set up yet.", actions: [LOCAL, SET_KEY, COMPATIBLE] };
  }
  if (/baseurl|base url|openai-compatible|model` key|model key is required/.test(text)) {
    return { title: "The model server is not fully configured.", actions: [COMPATIBLE, SET_KEY, LOCAL] };
  }
  if (/server is not running|connection got disposed|pending response rejected|client is not running|stopped/.test(text)) {
    return { title: "The Baton server stopped.", actions: [RESTART, LOG] };
  }
  const retried = /gave up after (\d+) retr/.exec(text);
  const after = retried ? ` Baton retried ${retried[1]} ${retried[1] === "1" ? "time" : "times"}.` : "";
  if (/context_length_exceeded|too long|maximum context|context window|exceeds? (the )?(model'?s? )?context|reduce the length|cannot fit the context/.test(text)) {
    return { title: "The conversation is too long for the model's context window. Compact it, or start a new session.", actions: [LOG] };
  }
  if (/429|rate.?limit|quota|too many requests/.test(text)) {
    return { title: `The model provider is rate-limiting requests.${after} Wait a moment, then retry.`, actions: [LOG] };
  }
  if (/content[_ ]?(policy|filter)|refusal|safety system|flagged/.test(text)) {
    return { title: "The model provider refused this request.", actions: [LOG] };
  }
  if (/stream broke|partial output|stream ended|incomplete chunked|peer closed|server disconnected|remoteprotocolerror|readerror/.test(text)) {
    return { title: `The connection to the model dropped mid-answer.${after} The partial answer is kept; retry to ask again.`, actions: [LOG] };
  }
  if (/\b50[0-9]\b|server_error|overloaded|bad gateway|service unavailable/.test(text)) {
    return { title: `The model provider had a server error.${after} Retry in a moment.`, actions: [LOG] };
  }
  if (/timed? ?out|timeout|could not connect|connect|unreachable|network|dns|refused|reset/.test(text)) {
    return { title: `Could not reach the model provider.${after}`, actions: [COMPATIBLE, LOG] };
  }
  return { title: "The turn stopped with an error.", actions: [LOG] };
}
