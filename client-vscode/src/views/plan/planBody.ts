// Static markup of the plan panel; webview/plan fills it in.
export const PLAN_BODY = `
<main id="plan-app">
  <header class="plan-header">
    <div>
      <div id="plan-title" class="plan-session"></div>
      <div class="plan-meta"><span id="plan-status" class="status-badge"></span> <span id="plan-version"></span> <span id="plan-path" class="path"></span></div>
      <div class="plan-progress"><progress id="plan-progress" max="1" value="0" hidden></progress> <span id="plan-progress-label" role="status"></span> <span id="plan-activity" class="activity"></span></div>
    </div>
    <div class="toolbar">
      <vscode-button id="approve" title="Approve the plan and start building">Approve</vscode-button>
      <vscode-button id="request-changes-toggle" secondary>Request changes</vscode-button>
      <vscode-button id="open-file" secondary title="Open the plan's markdown file in an editor">Open plan file</vscode-button>
    </div>
  </header>
  <div id="notice" class="banner" hidden></div>
  <section id="feedback-box" class="feedback" hidden>
    <vscode-textarea id="feedback" rows="4" resize="vertical" placeholder="What should change in the plan?"></vscode-textarea>
    <div class="toolbar">
      <vscode-button id="send-feedback">Send feedback</vscode-button>
      <vscode-button id="cancel-feedback" secondary>Cancel</vscode-button>
    </div>
  </section>
  <nav class="tabs" role="tablist">
    <button id="tab-plan" class="tab" role="tab" aria-selected="true">Plan</button>
    <button id="tab-history" class="tab" role="tab" aria-selected="false">History</button>
  </nav>
  <article id="plan-content" class="markdown-body" role="tabpanel"></article>
  <section id="history" role="tabpanel" hidden>
    <div class="toolbar">
      <label>From <select id="diff-from"></select></label>
      <label>To <select id="diff-to"></select></label>
      <vscode-button id="show-diff" secondary>Show diff</vscode-button>
    </div>
    <ol id="version-list" class="versions"></ol>
    <pre id="diff" class="diff" aria-label="Differences between versions"></pre>
  </section>
</main>`;
