// `rsop node`: a cloud node's gateway process (N53–N66). It follows its system on the service, decides
// the scans it reads (stdin, or a local socket) and answers them on the same stream, and uploads the
// access events; its state lives in its --data file. It runs until its scan input ends (stdin) or
// until SIGINT/SIGTERM (--socket).
import type { Command } from "commander";
import { CloudNode } from "../../node/cloudNode.js";
import { NodeStoreError } from "../../node/nodeStore.js";
import { type ScanServer, listenForScans, serveScans } from "../../node/scanInput.js";
import { CliError, type CliIo, UsageError, readJsonFile } from "./io.js";

interface NodeCommandOptions {
  readonly service: string;
  readonly system?: string;
  readonly node?: string;
  readonly panel?: string;
  readonly token?: string;
  readonly data: string;
  readonly socket?: string;
  readonly heartbeat: string;
  readonly hardware?: string;
  readonly wireless?: string;
  readonly clockUnreliable?: boolean;
}

/** After the scans on stdin end, how long the node keeps trying to upload their events. */
const FINAL_UPLOAD_MS = 10_000;

const HELP = `
The node decides every scan locally, also while the service can't be reached (then offline, by the
system's offline rules). Scans are JSON lines in the request shape of \`rsop decide\` without \`node\`;
\`at\` defaults to the node's clock. Each answer is one line, in order, as \`rsop decide\` answers.

Examples:
  rsop node --service http://127.0.0.1:8080 --system SYSTEM_ID --node NODE_ID \\
            --token "$NODE_TOKEN" --data node.db < scans.jsonl
  rsop node … --data node.db --socket /run/rsop-node.sock   # scans from a local socket
`;

function usage(o: NodeCommandOptions): { systemId: string; nodeId: string; token: string; heartbeat: number } {
  if (o.panel !== undefined)
    throw new UsageError("--panel (a 1.0 panel as a node) is not supported yet: run the node with --system and --node");
  if (o.system === undefined || o.node === undefined) throw new UsageError("--system and --node are required");
  const token = o.token ?? process.env.RSOP_NODE_TOKEN;
  if (token === undefined || token === "")
    throw new UsageError("--token (or the environment variable RSOP_NODE_TOKEN) is required");
  const heartbeat = Number(o.heartbeat);
  if (!Number.isInteger(heartbeat) || heartbeat < 1 || heartbeat > 300)
    throw new UsageError(`--heartbeat must be a whole number of seconds from 1 to 300, got ${o.heartbeat}`);
  try {
    new URL(o.service);
  } catch {
    throw new UsageError(`--service must be a URL such as http://127.0.0.1:8080, got ${o.service}`);
  }
  return { systemId: o.system, nodeId: o.node, token, heartbeat };
}

/** The items of --hardware or --wireless FILE: a JSON array (the service checks each item, N4, N27). */
async function readItems(option: string, file: string | undefined): Promise<unknown[] | undefined> {
  if (file === undefined) return undefined;
  const items = await readJsonFile(file, option);
  if (!Array.isArray(items)) throw new CliError(`${option} ${file}: must be a JSON array`);
  return items;
}

/** Resolves on SIGINT or SIGTERM, or when `signal` aborts; `cancel` takes the listeners away. */
function stopped(signal: AbortSignal | undefined): { done: Promise<void>; cancel(): void } {
  let cancel = () => {};
  const done = new Promise<void>((resolve) => {
    const stop = () => {
      cancel();
      resolve();
    };
    cancel = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      signal?.removeEventListener("abort", stop);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    signal?.addEventListener("abort", stop);
  });
  return { done, cancel };
}

async function runNode(o: NodeCommandOptions, io: CliIo): Promise<void> {
  const u = usage(o);
  const hardware = await readItems("--hardware", o.hardware);
  const wireless = await readItems("--wireless", o.wireless);
  let node: CloudNode;
  try {
    node = await CloudNode.start({
      service: o.service,
      systemId: u.systemId,
      nodeId: u.nodeId,
      token: u.token,
      dataFile: o.data,
      heartbeatSeconds: u.heartbeat,
      ...(hardware !== undefined ? { hardware } : {}),
      ...(wireless !== undefined ? { wireless } : {}),
      ...(o.clockUnreliable === true ? { timeReliable: false } : {}),
      log: (line) => io.stderr.write(`rsop node: ${line}\n`),
    });
  } catch (e) {
    if (e instanceof NodeStoreError) throw new CliError(e.message);
    throw e;
  }
  let server: ScanServer | undefined;
  const stop = stopped(io.closed);
  try {
    // Scans wait (in their pipe or socket backlog) until the node has a system and knows whether it
    // reaches the service: answering them before would only say "no system yet" or "offline".
    if (node.engine === null) io.stderr.write("rsop node: waiting for the first download of the system\n");
    await Promise.race([node.ready(), stop.done]);
    if (o.socket !== undefined) {
      server = await listenForScans(node, o.socket).catch((e: Error) => {
        throw new CliError(`--socket ${o.socket}: ${e.message}`);
      });
      await stop.done;
    } else {
      await Promise.race([serveScans(node, io.stdin, io.stdout), stop.done]);
      await Promise.race([node.flush(), stop.done, new Promise((r) => setTimeout(r, FINAL_UPLOAD_MS).unref())]);
    }
  } finally {
    stop.cancel();
    server?.close();
    await node.close();
  }
}

export function registerNodeCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("node")
    .description("run a cloud node: follow its system on the service, decide scans locally, upload access events")
    .requiredOption("--service <url>", "the service's base URL (its systems host)")
    .option("--system <id>", "the system the node belongs to")
    .option("--node <id>", "the cloud node's id in that system")
    .option("--panel <serial>", "a 1.0 panel instead of --system/--node (not supported yet)")
    .option("--token <token>", "the node's token (POST /{system_id}/cloud-nodes/{id}/token); or RSOP_NODE_TOKEN")
    .requiredOption("--data <file>", "the node's SQLite data file (made when missing)")
    .option("--socket <path>", "read scans from connections to this unix socket instead of stdin")
    .option("--heartbeat <seconds>", "seconds between heartbeats, 1-300", "5")
    .option("--hardware <file>", "a JSON array of the hardware items to report (connections and readers)")
    .option("--wireless <file>", "a JSON array of the wireless diagnostics to report (networks, nodes, links)")
    .option("--clock-unreliable", "the node's clock can't be trusted: offline decisions have no time")
    .addHelpText("after", HELP)
    .action(async (o: NodeCommandOptions) => {
      await runNode(o, io);
      setCode(0);
    });
}
