// Helpers of the `rsop serve --store postgres://…` tests: one throwaway cluster per test file (a real
// PostgreSQL server, test/support/postgresCluster.ts), one fresh database per test, replicas started
// in-process (closed after the test), and a look into the database's tables.
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import type { RunningDataServer, StartDataServerOptions } from "../../src/adapters/http/startDataServer.js";
import { type Caller, startStored } from "../http/dataSupport.js";
import { type PostgresCluster, findPostgres, startPostgresCluster } from "../support/postgresCluster.js";

export const PG = findPostgres();
/** Appended to a test's name where the binaries are missing, so the skip says why. */
export const SKIP_NOTE = PG.ok ? "" : ` (skipped: ${PG.why})`;

let cluster: PostgresCluster | undefined;
let databases = 0;

/** Starts the file's cluster before its tests and stops it after (nothing where PostgreSQL is missing). */
export function useCluster(): () => PostgresCluster {
  beforeAll(async () => {
    if (PG.ok) cluster = await startPostgresCluster(PG);
  }, 120_000);
  afterAll(() => cluster?.stop());
  return () => {
    if (cluster === undefined) throw new Error("no PostgreSQL cluster");
    return cluster;
  };
}

/** A new empty database of the file's cluster: its URL. */
export async function freshDatabase(): Promise<string> {
  if (cluster === undefined) throw new Error("no PostgreSQL cluster");
  return cluster.createDatabase(`rsop_t${process.pid}_${++databases}`);
}

/** Starts a replica on `url` (closed after the test); `initial` is imported into an empty database. */
export function startReplica(
  url: string,
  initial?: unknown,
  extra: Partial<StartDataServerOptions> = {},
): Promise<{ server: RunningDataServer; lines: string[]; call: Caller }> {
  return startStored({ storeUrl: url }, initial, extra);
}

/** Runs one query on `url` in a connection of its own. */
export async function sql<R extends object = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  // A server restart during the query ends it with an error event as well as the query's rejection.
  c.on("error", () => undefined);
  await c.connect();
  try {
    return (await c.query<R>(text, params)).rows;
  } finally {
    await c.end();
  }
}

/** The change log (sequence numbers and operations) and the stored snapshots' sequence numbers. */
export async function inspectPg(
  url: string,
): Promise<{ changes: { seq: number; operation: any }[]; snapshots: number[] }> {
  const changes = (
    await sql<{ seq: string; operation: string }>(url, "SELECT seq, operation FROM rsop_changes ORDER BY seq")
  ).map((r) => ({
    seq: Number(r.seq),
    operation: JSON.parse(r.operation),
  }));
  const snapshots = (await sql<{ seq: string }>(url, "SELECT seq FROM rsop_snapshots ORDER BY seq")).map((r) =>
    Number(r.seq),
  );
  return { changes, snapshots };
}

/** Resolves once `check` holds (polled every 20 ms), or rejects after `ms` with `what`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
