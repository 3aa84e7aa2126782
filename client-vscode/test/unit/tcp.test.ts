// Connecting to a `baton serve --tcp` the person started: the setting's checks,
// the token from its file in `initialize`, a real socket, and a stop that never
// sends `exit` to the shared server.
import { mkdtemp, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StartupError } from "../../src/client/startupError";
import { parseTcpTarget, readToken } from "../../src/client/tcp";
import { CloseAction } from "../mocks/languageclient";
import * as vscode from "../mocks/vscode";

describe("baton.server.tcp", () => {
  it("takes a loopback HOST:PORT and a token file, ~ expanded", () => {
    expect(parseTcpTarget(undefined, "/t")).toBeUndefined();
    expect(parseTcpTarget("  ", "/t")).toBeUndefined();
    expect(parseTcpTarget("127.0.0.1:8765", "~/baton.token", "/home/me")).toEqual({
      host: "127.0.0.1",
      port: 8765,
      tokenFile: "/home/me/baton.token",
      address: "127.0.0.1:8765",
    });
    expect(parseTcpTarget("[::1]:9", "/t")?.host).toBe("::1");
    expect(parseTcpTarget("localhost:9", "/t")?.host).toBe("localhost");
  });

  it("refuses another host, a bad port, and a missing token file, saying what to do", () => {
    expect(() => parseTcpTarget("10.0.0.5:8765", "/t")).toThrow(/loopback address .* SSH tunnel/);
    expect(() => parseTcpTarget("0.0.0.0:8765", "/t")).toThrow(/loopback/);
    expect(() => parseTcpTarget("127.0.0.1", "/t")).toThrow(/HOST:PORT/);
    expect(() => parseTcpTarget("127.0.0.1:70000", "/t")).toThrow(/HOST:PORT/);
    expect(() => parseTcpTarget("127.0.0.1:8765", undefined)).toThrow(/--token-file PATH/);
  });

  it("reads the token without its newline and names a missing file", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "baton-tcp-"));
    const file = path.join(dir, "tcp.token");
    await writeFile(file, "abc123\n");
    const target = parseTcpTarget("127.0.0.1:1", file)!;
    expect(await readToken(target)).toBe("abc123");
    const missing = parseTcpTarget("127.0.0.1:1", path.join(dir, "nope"))!;
    await expect(readToken(missing)).rejects.toThrow(/cannot read the token file .*nope \(ENOENT\)/);
  });
});

describe("the client over TCP", () => {
  const servers: net.Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });

  async function listen(): Promise<{ port: number; sockets: net.Socket[]; accepted: Promise<net.Socket> }> {
    const sockets: net.Socket[] = [];
    let accept: (socket: net.Socket) => void = () => undefined;
    // Resolves when the server has accepted its first connection (an event, not a wait).
    const accepted = new Promise<net.Socket>((resolve) => (accept = resolve));
    const server = net.createServer((socket) => {
      sockets.push(socket);
      accept(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { port: (server.address() as net.AddressInfo).port, sockets, accepted };
  }

  async function client(tcp: () => ReturnType<typeof parseTcpTarget>, reported: unknown[]) {
    const { BatonClient } = await import("../../src/client/batonClient");
    vscode.resetMock();
    const { fake } = await import("../mocks/languageclient");
    fake.reset();
    const prepared: string[] = [];
    const batonClient = new BatonClient({
      output: vscode.window.createOutputChannel("test") as never,
      prepare: async () => {
        prepared.push("prepare");
        throw new Error("no Python is needed for TCP");
      },
      initializationOptions: () => ({ settings: { model: "m" } }),
      workspaceFolder: () => undefined,
      afterStart: async () => undefined,
      reportProblem: (e) => reported.push(e),
      tcp,
    });
    return { batonClient, fake, prepared };
  }

  it("sends the token in initialize, connects a real socket, and stops without exit", async () => {
    const { port, sockets, accepted } = await listen();
    const dir = await mkdtemp(path.join(os.tmpdir(), "baton-tcp-"));
    const file = path.join(dir, "tcp.token");
    await writeFile(file, "s3cret-token\n");
    const reported: unknown[] = [];
    const { batonClient, fake, prepared } = await client(() => parseTcpTarget(`127.0.0.1:${port}`, file), reported);
    await batonClient.ensureStarted();
    expect(prepared).toEqual([]);
    expect(reported).toEqual([]);
    expect(fake.last.clientOptions.initializationOptions).toEqual({ settings: { model: "m" }, token: "s3cret-token" });
    const open = fake.last.serverOptions as () => Promise<{ reader: net.Socket; writer: net.Socket }>;
    const stream = await open();
    expect(stream.reader).toBe(stream.writer);
    const socket = await accepted;
    expect(sockets).toEqual([socket]);
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    await batonClient.stop();
    await closed;
    expect(sockets).toEqual([socket]); // one connection, and it was the one closed
    expect(stream.reader.destroyed).toBe(true);
    const handler = fake.last.clientOptions.errorHandler as { closed(): { action: number } };
    expect(handler.closed().action).toBe(CloseAction.DoNotRestart);
  });

  it("reports a wrong setting or a missing token file once, as a connection problem", async () => {
    const reported: unknown[] = [];
    const { batonClient } = await client(() => parseTcpTarget("192.168.1.2:8765", "/t"), reported);
    const error = (await batonClient.ensureStarted().catch((e: unknown) => e)) as StartupError;
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toMatch(/could not use the Baton server at baton.server.tcp .*loopback/);
    expect(reported).toEqual([error]);
    expect(batonClient.state).toBe("failed");

    const again: unknown[] = [];
    const { batonClient: second } = await client(() => parseTcpTarget("127.0.0.1:8765", "/no/such/token"), again);
    const missing = (await second.ensureStarted().catch((e: unknown) => e)) as StartupError;
    expect(missing.message).toContain("could not use the Baton server at 127.0.0.1:8765 (cannot read the token file /no/such/token");
    expect(again).toEqual([missing]);
  });
});
