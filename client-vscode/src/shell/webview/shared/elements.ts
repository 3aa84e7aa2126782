// The @vscode-elements web components the webviews use (native VS Code look).
import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-textarea/index.js";
import "@vscode-elements/elements/dist/vscode-collapsible/index.js";
import "@vscode-elements/elements/dist/vscode-badge/index.js";
