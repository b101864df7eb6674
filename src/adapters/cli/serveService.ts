// `rsop serve --data FILE.db` with no snapshot on a new, empty or service database: the service of
// every organization, system and panel kept there (semantics T52). Without any token it still
// starts, with its root organization, and says how to give the first admin access.
import {
  type RunningServiceServer,
  type StartServiceServerOptions,
  startServiceServer,
} from "../http/startServiceServer.js";
import { KIND } from "../../service/identity/records.js";
import type { CliIo } from "./io.js";

/** What serveCommand hands over once it has checked the flags. */
export interface ServiceStart extends Omit<StartServiceServerOptions, "log"> {
  readonly log: (line: string) => void;
}

/** Starts the service; logs how to reach it, and how to give the first admin access when no token is given. */
export async function startService(
  start: ServiceStart,
  io: CliIo,
  onListening?: (server: RunningServiceServer) => void,
): Promise<RunningServiceServer> {
  const server = await startServiceServer(start);
  const hasAccounts = !server.registry.records(KIND.user).next().done || !server.registry.records(KIND.app).next().done;
  if (start.token === undefined && start.tokens === undefined && !hasAccounts) {
    const root = server.registry.root().id;
    const file = start.dataFile ?? "FILE.db";
    start.log(
      `no users, applications or tokens yet: every request is refused (401). To make the first administrator, stop the service and run \`rsop users add --data ${file} --email EMAIL\` (the password on standard input), or restart with RSOP_TOKEN set to a secret of 16 characters or more (the root organization's admin), or with --tokens FILE whose entries name organizations, e.g. {"<token>": {"role": "admin", "organizations": ["${root}"]}}`,
    );
  }
  void io;
  onListening?.(server);
  return server;
}
