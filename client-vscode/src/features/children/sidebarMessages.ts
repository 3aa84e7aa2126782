// The children feature's sidebar messages: a child's card opens its transcript, or
// asks for its history to show it in the sidebar's own rendering.
import type { MessageRegistry, Registration } from "../../shell/messageRegistry";
import type { SidebarHost } from "../../shell/sidebarHost";

export function register(registry: MessageRegistry, host: SidebarHost): Registration[] {
  return [
    registry.on("openChild", (m) => host.openChild(m.sessionId)),
    registry.on("childHistory", async (m) => {
      const loaded = await host.client.request("baton/session/load", { sessionId: m.sessionId });
      host.post({ type: "childHistory", sessionId: m.sessionId, messages: loaded.messages });
    }),
  ];
}
