// Static markup of the sidebar; everything dynamic is built by its webview (webview/main.ts).
// Session actions live in the view's title bar (package.json `view/title`); the
// sidebar itself keeps one header row, the transcript and the composer.
export const SIDEBAR_BODY = `
<main id="app" data-server="starting">
  <header class="session-header">
    <select id="session-select" aria-label="Session"></select>
    <button id="context" class="context" type="button" aria-label="Context window in use" hidden>
      <span id="context-meter" class="meter" role="meter" aria-label="Context in use" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0" data-fraction="0"><span class="meter-fill"></span></span>
      <span id="context-label"></span>
    </button>
  </header>
  <a id="plan-line" class="plan-line" href="#" hidden></a>
  <div id="server-banner" class="banner" role="alert" hidden>
    <div id="server-banner-text"></div>
    <div class="banner-actions">
      <vscode-button id="banner-restart" data-action="restartServer">Restart Server</vscode-button>
      <vscode-button id="banner-log" secondary data-action="showLog">Show Log</vscode-button>
      <vscode-button id="banner-python" secondary data-action="setPythonPath">Set Python Path</vscode-button>
    </div>
  </div>
  <section id="trust-banner" class="banner trust-banner" hidden aria-labelledby="trust-title">
    <div id="trust-title" class="trust-title">Restricted Mode: this folder is not trusted</div>
    <p class="trust-text">Baton works with your own settings and ignores what this folder's settings would run or redirect:</p>
    <ul id="trust-ignored" class="trust-ignored"></ul>
    <div class="banner-actions">
      <vscode-button id="trust-manage" data-action="manageTrust">Manage Workspace Trust</vscode-button>
    </div>
  </section>
  <section id="welcome" class="welcome" hidden aria-labelledby="welcome-title">
    <h2 id="welcome-title">Ask Baton to plan or build</h2>
    <p>Type a task below and press <kbd>Enter</kbd>. Baton plans in a file you can review, then builds it step by step.</p>
    <p id="welcome-model" class="welcome-model"></p>
    <div id="welcome-models" class="welcome-models" role="group" aria-label="The server's models" hidden></div>
    <div class="welcome-choices" role="group" aria-label="Choose a model">
      <button type="button" class="choice" data-action="useLocalModel"><span><strong>Use a local model</strong><br><span class="choice-detail">Runs on this machine; nothing leaves it.</span></span></button>
      <button type="button" class="choice" data-action="setKey"><span><strong>Use an OpenAI API key</strong><br><span class="choice-detail">Kept in VS Code's secret storage.</span></span></button>
      <button type="button" class="choice" data-action="useCompatibleServer"><span><strong>Use an OpenAI-compatible server</strong><br><span class="choice-detail">Ollama, LM Studio, vLLM, llama.cpp, OpenRouter…</span></span></button>
    </div>
  </section>
  <section id="transcript" aria-live="polite"></section>
  <section id="permissions"></section>
  <footer class="composer">
    <div id="attachments" class="attachments" aria-label="Attached to the next prompt" hidden></div>
    <div id="image-chips" class="attachments image-chips" aria-label="Images for the next prompt" hidden></div>
    <div id="image-problem" class="send-reason" role="alert" hidden></div>
    <input id="image-file" type="file" accept="image/png,image/jpeg,image/gif,image/webp" multiple hidden>
    <ul id="mentions" class="mentions" role="listbox" aria-label="Workspace files" hidden></ul>
    <ul id="slash-menu" class="mentions slash-menu" role="listbox" aria-label="Commands" hidden></ul>
    <div id="queue" class="queue" hidden>
      <ul id="queued" class="queued" aria-label="Waiting for the agent"></ul>
      <label class="queue-delivery">Sent while it works, reaches the agent
        <select id="queue-delivery">
          <option value="steer">at its next step</option>
          <option value="after_turn">after this turn</option>
        </select>
      </label>
    </div>
    <vscode-textarea id="prompt" rows="3" resize="vertical" placeholder="Ask Baton… (@ to attach a file, / for commands, paste or drop an image, Enter to send, Shift+Enter for a new line)"></vscode-textarea>
    <div id="turn-status" class="turn-status" role="status"></div>
    <div id="composer-bar" class="composer-bar">
      <div class="mode-switch" role="radiogroup" aria-label="Mode">
        <button id="mode-build" type="button" role="radio" aria-checked="true" title="Build: the agent works on the files (asks before commands and writes)">Build</button>
        <button id="mode-plan" type="button" role="radio" aria-checked="false" title="Plan: the agent writes a plan for you to review and changes no files">Plan</button>
      </div>
      <button id="pick-model" class="model-picker" type="button" title="Choose the model for this session's next requests">Model</button>
      <button id="composer-more" class="composer-more" type="button" aria-label="More actions" title="More actions">…</button>
      <vscode-button id="cancel" secondary disabled title="Stop the running turn (Ctrl+Shift+Alt+Backspace)">Stop</vscode-button>
      <vscode-button id="send" title="Send (Enter)">Send</vscode-button>
    </div>
    <div id="composer-menu" class="composer-menu" aria-label="More actions" hidden></div>
    <div id="send-reason" class="send-reason" role="status" hidden></div>
  </footer>
</main>`;
