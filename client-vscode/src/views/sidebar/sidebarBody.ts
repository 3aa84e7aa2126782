// Static markup of the sidebar; everything dynamic is built by webview/sidebar.
export const SIDEBAR_BODY = `
<main id="app" data-server="starting">
  <header class="toolbar">
    <select id="session-select" aria-label="Session"></select>
    <vscode-button id="new-session" secondary title="New session">New</vscode-button>
  </header>
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
    <vscode-textarea id="prompt" rows="3" resize="vertical" placeholder="Ask the agent… (Ctrl+Enter to send)"></vscode-textarea>
    <div class="toolbar">
      <vscode-button id="send">Send</vscode-button>
      <vscode-button id="cancel" secondary disabled>Cancel</vscode-button>
      <span id="turn-status" class="turn-status"></span>
    </div>
  </footer>
</main>`;
