// Connecting to a `baton serve --tcp` the person started themselves, instead of
// starting a server over stdio (docs/protocol.md, "TCP clients"): a server shared
// by two windows, or one started by a task. The token comes from the file the
// server wrote (readable by the person only) and goes in `initialize`.
import { readFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface TcpTarget {
  host: string;
  port: number;
  tokenFile: string;
  /** As the person wrote it, for messages. */
  address: string;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * The server to connect to from `baton.server.tcp` ("127.0.0.1:8765", "[::1]:8765")
 * and `baton.server.tokenFile`; undefined when `tcp` is unset (start a server over
 * stdio). Only loopback addresses: the token and the API key travel in clear text,
 * so another machine is reached through an SSH tunnel to a local port.
 */
export function parseTcpTarget(address: string | undefined, tokenFile: string | undefined, home = os.homedir()): TcpTarget | undefined {
  const raw = address?.trim();
  if (!raw) return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(raw);
  const host = match?.[1] ?? match?.[2];
  const port = match ? Number(match[3]) : NaN;
  if (!host || !(port >= 1 && port <= 65535)) {
    throw new Error(`"baton.server.tcp" must be HOST:PORT, for example 127.0.0.1:8765, not "${raw}"`);
  }
  if (!LOOPBACK.has(host.toLowerCase())) {
    throw new Error(
      `"baton.server.tcp" must be a loopback address (127.0.0.1, [::1] or localhost), not ${host}: ` +
        "reach a server on another machine through an SSH tunnel to a local port",
    );
  }
  const file = tokenFile?.trim();
  if (!file) {
    throw new Error(
      `"baton.server.tokenFile" is not set: start the server with "baton serve --tcp ${raw} --token-file PATH" and set it to PATH`,
    );
  }
  const expanded = file === "~" || file.startsWith("~/") ? path.join(home, file.slice(1)) : file;
  return { host, port, tokenFile: expanded, address: raw };
}

/** The token the server wrote, without its newline. */
export async function readToken(target: TcpTarget): Promise<string> {
  let text: string;
  try {
    text = await readFile(target.tokenFile, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(`cannot read the token file ${target.tokenFile} (${code}); is "baton serve --tcp ${target.address}" running?`);
  }
  const token = text.trim();
  if (!token) throw new Error(`the token file ${target.tokenFile} is empty`);
  return token;
}

/** An open connection to the server, or an error saying why there is none. */
export function connectTcp(target: TcpTarget): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.host, port: target.port });
    const failed = (error: Error) => {
      socket.destroy();
      reject(new Error(`cannot connect to ${target.address}: ${error.message}`));
    };
    socket.once("error", failed);
    socket.once("connect", () => {
      socket.off("error", failed);
      resolve(socket);
    });
  });
}
