// Scans reach a node over a byte stream (its stdin) or a local socket (N58): each connection is its
// own scan input, its answers written back to it in order, with backpressure: a reader that does not
// take its answers stops the node reading its scans, so nothing piles up in memory.
import { existsSync, lstatSync, unlinkSync } from "node:fs";
import { type Socket, createServer } from "node:net";
import type { CloudNode } from "./cloudNode.js";

// What these functions use of a stream and a server, written out so that the declarations of
// rsop-engine/node need no @types/node in a consumer (a node:stream Readable and Writable, a
// node:net Server, fit them).

/** The scan input: a byte stream, such as process.stdin or a socket. */
export interface ScanInput {
  on(event: "data", listener: (chunk: Uint8Array | string) => void): unknown;
  off(event: "data", listener: (chunk: Uint8Array | string) => void): unknown;
  once(event: "end" | "error", listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
  isPaused(): boolean;
  destroy(): unknown;
}

/** Where the answers go: a writable byte stream, such as process.stdout or a socket. */
export interface ScanOutput {
  write(text: string): boolean;
  once(event: "drain" | "error", listener: () => void): unknown;
  readonly writableLength: number;
}

/** The listening socket of listenForScans. */
export interface ScanServer {
  close(callback?: (error?: Error) => void): unknown;
}

/**
 * Answers the scans read from `input` on `output` until `input` ends (or fails); resolves then,
 * once every answer has been handed to `output`.
 */
export function serveScans(node: CloudNode, input: ScanInput, output: ScanOutput): Promise<void> {
  return new Promise((resolve) => {
    const scans = node.scanStream((text) => {
      if (!output.write(text) && !input.isPaused()) {
        input.pause();
        output.once("drain", () => input.resume());
      }
    });
    const done = () => {
      input.off("data", onData);
      scans.end();
      if (output.writableLength === 0) resolve();
      else output.once("drain", () => resolve());
    };
    const onData = (chunk: Uint8Array | string) =>
      scans.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    input.on("data", onData);
    input.once("end", done);
    input.once("error", done);
    output.once("error", () => input.destroy());
  });
}

/**
 * Listens for scan connections on the unix socket `path` (a socket left there by an earlier run is
 * replaced; any other file is refused). Each connection gets its answers, numbered from its own line 1.
 */
export async function listenForScans(node: CloudNode, path: string): Promise<ScanServer> {
  if (existsSync(path)) {
    if (!lstatSync(path).isSocket())
      throw new Error(`${path} exists and is not a socket: choose another --socket path`);
    unlinkSync(path);
  }
  const server = createServer((socket: Socket) => {
    socket.on("error", () => socket.destroy());
    void serveScans(node, socket, socket).then(() => socket.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
