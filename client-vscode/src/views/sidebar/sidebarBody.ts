// Static markup of the sidebar; everything dynamic is built by webview/sidebar.
export const SIDEBAR_BODY = `
<main id="app" data-server="starting">
  <header class="toolbar">
    <select id="session-select" aria-label="Session"></select>
    <vscode-button id="new-session" secondary title="New session">New</vscode-button>
  </header>
  <div class="toolbar session-bar" role="group" aria-label="Session">
    <input id="session-search" type="search" placeholder="Search sessions" aria-label="Search sessions">
    <vscode-button id="rename-session" secondary title="Rename the session">Rename</vscode-button>
    <vscode-button id="fork-session" secondary title="Fork: a new session with this one's history, plan and compactions">Fork</vscode-button>
    <vscode-button id="export-session" secondary title="Export the session as markdown">Export</vscode-button>
    <vscode-button id="delete-session" secondary title="Delete the session (asks first; the plan file stays)">Delete</vscode-button>
  </div>
  <div id="session-info" class="session-info" hidden>
    <vscode-button id="pick-model" secondary title="Choose the model for this session's next requests">Model</vscode-button>
    <span class="context" title="Context window used by the next request">
      <meter id="context-meter" min="0" max="1" low="0.75" high="0.9" optimum="0" value="0"></meter>
      <span id="context-label"></span>
    </span>
    <span id="token-totals" class="token-totals" title="Tokens the provider reported for this session"></span>
    <a id="plan-line" class="plan-line" href="#" hidden></a>
  </div>
  <div class="toolbar mode-bar" role="group" aria-label="Mode">
    <vscode-button id="mode-plan" secondary title="Plan: the agent writes a plan and changes no files">Plan</vscode-button>
    <vscode-button id="mode-build" secondary title="Build: the agent works on the files">Build</vscode-button>
    <span id="mode-label" class="mode-label"></span>
    <vscode-button id="show-plan" secondary title="Show the session's plan">Plan view</vscode-button>
    <vscode-button id="compact" secondary title="Compact the session's context now">Compact</vscode-button>
  </div>
  <div id="server-banner" class="banner" hidden></div>
  <section id="transcript" aria-live="polite"></section>
  <section id="permissions"></section>
  <footer class="composer">
    <div id="attachments" class="attachments" aria-label="Attached to the next prompt" hidden></div>
    <ul id="mentions" class="mentions" role="listbox" aria-label="Workspace files" hidden></ul>
    <vscode-textarea id="prompt" rows="3" resize="vertical" placeholder="Ask the agent… (@ mentions a file; Ctrl+Enter to send)"></vscode-textarea>
    <div class="toolbar">
      <vscode-button id="send">Send</vscode-button>
      <vscode-button id="cancel" secondary disabled>Cancel</vscode-button>
      <span id="turn-status" class="turn-status"></span>
    </div>
  </footer>
</main>`;
