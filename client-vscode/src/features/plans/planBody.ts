// Static markup of the plan panel; its webview (webview/main.ts) fills it in.
export const PLAN_BODY = `
<main id="plan-app">
  <header class="plan-header">
    <div>
      <div id="plan-title" class="plan-session"></div>
      <div class="plan-meta"><span id="plan-status" class="status-badge"></span> <span id="plan-version"></span> <span id="plan-path" class="path"></span></div>
      <div class="plan-progress"><div id="plan-progress" class="progress-track" role="progressbar" aria-label="Steps done" aria-valuemin="0" aria-valuemax="1" aria-valuenow="0" hidden><div class="progress-fill"></div></div> <span id="plan-progress-label" role="status"></span> <span id="plan-activity" class="activity"></span></div>
    </div>
    <div class="toolbar">
      <vscode-button id="approve-fresh" title="Approve the plan and build it in a fresh context">Approve and build in a fresh context</vscode-button>
      <vscode-button id="approve-steps" secondary title="Approve the plan and let Baton build each step in a fresh child session, in order">Approve and build step by step</vscode-button>
      <vscode-button id="approve" secondary title="Approve the plan and build, keeping the planning conversation in view">Approve</vscode-button>
      <vscode-button id="request-changes-toggle" secondary>Request changes</vscode-button>
      <vscode-button id="open-file" secondary title="Open the plan's markdown file in an editor">Open plan file</vscode-button>
    </div>
  </header>
  <div id="notice" class="banner" hidden></div>
  <section id="feedback-box" class="feedback" hidden>
    <vscode-textarea id="feedback" rows="4" resize="vertical" placeholder="What should change in the plan? (Select text in the plan to comment on, replace or delete it.)"></vscode-textarea>
    <div id="feedback-annotations" class="feedback-annotations" role="status"></div>
    <div class="toolbar">
      <vscode-button id="send-feedback">Send feedback</vscode-button>
      <vscode-button id="cancel-feedback" secondary>Cancel</vscode-button>
    </div>
  </section>
  <nav class="tabs" role="tablist">
    <button id="tab-plan" class="tab" role="tab" aria-selected="true">Plan</button>
    <button id="tab-history" class="tab" role="tab" aria-selected="false">History</button>
  </nav>
  <p id="plan-changes" class="plan-changes" role="status" hidden></p>
  <div id="plan-body" class="plan-body">
    <article id="plan-content" class="markdown-body" role="tabpanel"></article>
    <aside id="review" class="review" aria-labelledby="review-count" hidden>
      <div class="review-head"><strong id="review-count"></strong></div>
      <p id="review-hint" class="review-hint"></p>
      <section id="annotation-editor" class="annotation-editor" hidden>
        <div id="annotation-kind" class="annotation-kind"></div>
        <blockquote id="annotation-quote" class="annotation-quote"></blockquote>
        <vscode-textarea id="annotation-text" rows="3" resize="vertical"></vscode-textarea>
        <div class="toolbar">
          <vscode-button id="annotation-save" title="Keep this annotation (Ctrl+Enter)">Save</vscode-button>
          <vscode-button id="annotation-cancel" secondary>Cancel</vscode-button>
        </div>
      </section>
      <ol id="annotation-list" class="annotation-list"></ol>
      <vscode-button id="review-send" title="Send the annotations and an overall comment to the agent">Request changes</vscode-button>
    </aside>
  </div>
  <div id="selection-tools" class="selection-tools" role="toolbar" aria-label="Annotate the selected lines" hidden>
    <button type="button" data-kind="comment" title="Comment on the selected lines">Comment</button>
    <button type="button" data-kind="replace" title="Say what should stand instead of the selected lines">Replace</button>
    <button type="button" data-kind="delete" title="Ask for the selected lines to be removed">Delete</button>
  </div>
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
