// The features that answer the sidebar's webview, each registering the message types
// it owns at activation (as the server's feature modules register their methods in
// server/baton/faces/lsp/features/). A new feature adds its module here.
import type { MessageRegistry, Registration } from "../shell/messageRegistry";
import type { SidebarHost } from "../shell/sidebarHost";
import * as children from "./children/sidebarMessages";
import * as compaction from "./compaction/sidebarMessages";
import * as composer from "./composer/sidebarMessages";
import * as plans from "./plans/sidebarMessages";
import type { PermissionPrompts } from "./permissions/permissionPrompts";
import type { QuestionHost } from "./question/questionHost";
import * as review from "./review/sidebarMessages";
import * as sessions from "./sessions/sidebarMessages";
import * as setup from "./setup/sidebarMessages";

/** Features that keep state across messages (pending prompts) register through their owner object. */
export interface StatefulFeatures {
  permissions: PermissionPrompts;
  questions: QuestionHost;
}

export function registerSidebarFeatures(registry: MessageRegistry, host: SidebarHost, owners: StatefulFeatures): Registration[] {
  return [
    ...sessions.register(registry, host),
    ...setup.register(registry, host),
    ...composer.register(registry, host),
    ...review.register(registry, host),
    ...children.register(registry, host),
    ...plans.register(registry),
    ...compaction.register(registry),
    ...owners.permissions.register(registry),
    ...owners.questions.register(registry),
  ];
}
