// A throwaway PostgreSQL cluster for the tests of `rsop serve --store postgres://…`: initdb in a temp
// folder, one server on 127.0.0.1 at a free port (and its unix socket in the same folder), stopped and
// removed after. No mock: the machine's own PostgreSQL binaries (Debian: /usr/lib/postgresql/<v>/bin;
// or $RSOP_PG_BIN; or initdb on the PATH). initdb and postgres refuse to run as root, so as root the
// cluster runs as the `postgres` system user (runuser), owner of the temp folder. Where no binaries
// are found, `findPostgres()` answers why, and the tests skip with that sentence.
import { execFile, spawnSync } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** Where the binaries are, or why the PostgreSQL tests skip. */
export type PostgresBinaries =
  | { readonly ok: true; readonly bin: string; readonly runAs: string | null }
  | { readonly ok: false; readonly why: string };

/** Milliseconds any one pg_ctl or initdb call may take before the helper gives up. */
const STEP_TIMEOUT_MS = 60_000;

function versionsIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
  } catch {
    return [];
  }
}

/**
 * Finds initdb, pg_ctl and postgres; as root, also the user to run them as.
 * @param where - where to look (the tests of the skip message change it): the environment
 *   (`RSOP_PG_BIN`, `PATH`) and the Debian folder of versions.
 */
export function findPostgres(
  where: { readonly env?: NodeJS.ProcessEnv; readonly debianDir?: string } = {},
): PostgresBinaries {
  const env = where.env ?? process.env;
  const debian = where.debianDir ?? "/usr/lib/postgresql";
  const candidates = [
    ...(env.RSOP_PG_BIN !== undefined ? [env.RSOP_PG_BIN] : []),
    ...versionsIn(debian).map((v) => `${debian}/${v}/bin`),
  ];
  const which = spawnSync("/bin/sh", ["-c", "command -v initdb"], { encoding: "utf8", env });
  if (which.status === 0 && which.stdout.trim() !== "") candidates.push(join(which.stdout.trim(), ".."));
  const bin = candidates.find((d) => ["initdb", "pg_ctl", "postgres"].every((b) => existsSync(join(d, b))));
  if (bin === undefined)
    return {
      ok: false,
      why: "no PostgreSQL server binaries (initdb, pg_ctl, postgres) in /usr/lib/postgresql/*/bin, $RSOP_PG_BIN or the PATH: apt-get install postgresql (.ci/run does)",
    };
  if (userInfo().uid !== 0) return { ok: true, bin, runAs: null };
  const user = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  if (user.status !== 0)
    return {
      ok: false,
      why: "running as root, and PostgreSQL refuses root: no `postgres` user to run the test cluster as",
    };
  return { ok: true, bin, runAs: "postgres" };
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolvePort(port));
    });
  });
}

/** A running throwaway cluster. */
export interface PostgresCluster {
  /** `postgres://rsop@127.0.0.1:PORT/rsop` (trust authentication: the cluster is private to the test). */
  readonly url: string;
  readonly port: number;
  /** The temp folder holding the cluster (removed by stop). */
  readonly dir: string;
  /** A URL of another database of this cluster, created on demand (one per test keeps tests apart). */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: open sessions are cut, committed data stays) and starts it again on the same port. */
  restart(): Promise<void>;
  /** Stops the server and removes its folder. */
  stop(): void;
}

/**
 * initdb + pg_ctl start in a temp folder; resolves once the server accepts connections.
 * @throws Error with the tool's output when a step fails (the folder is removed).
 */
export async function startPostgresCluster(bins: Extract<PostgresBinaries, { ok: true }>): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), "rsop-pg-"));
  const data = join(dir, "data");
  if (bins.runAs !== null) {
    const ids = spawnSync("id", ["-u", bins.runAs], { encoding: "utf8" });
    const gids = spawnSync("id", ["-g", bins.runAs], { encoding: "utf8" });
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const run = (tool: string, args: readonly string[]) => {
    const cmd = bins.runAs === null ? join(bins.bin, tool) : "runuser";
    const full = bins.runAs === null ? args : ["-u", bins.runAs, "--", join(bins.bin, tool), ...args];
    const r = spawnSync(cmd, full, { encoding: "utf8", timeout: STEP_TIMEOUT_MS, cwd: dir });
    if (r.status !== 0)
      throw new Error(
        `${tool} ${args.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr}${r.stdout}${r.error?.message ?? ""}`,
      );
    return r.stdout;
  };
  const runAsync = (tool: string, args: readonly string[]) =>
    new Promise<void>((resolveRun, reject) => {
      const cmd = bins.runAs === null ? join(bins.bin, tool) : "runuser";
      const full = bins.runAs === null ? args : ["-u", bins.runAs, "--", join(bins.bin, tool), ...args];
      execFile(cmd, full, { timeout: STEP_TIMEOUT_MS, cwd: dir }, (e, stdout, stderr) =>
        e === null
          ? resolveRun()
          : reject(new Error(`${tool} ${args.join(" ")} failed: ${e.message} ${stderr}${stdout}`)),
      );
    });
  let port = 0;
  const startServer = () => run("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  try {
    run("initdb", ["-D", data, "-U", "rsop", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"]);
    // Bounded and small: a test cluster. fsync stays on (acknowledged means on disk, as in production).
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      const conf = [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        "max_connections = 100",
        "shared_buffers = 32MB",
        "log_min_messages = warning",
      ].join("\n");
      appendFileSync(join(data, "postgresql.conf"), `\n${conf}\n`);
      try {
        startServer();
        break;
      } catch (e) {
        if (attempt >= 2) throw e; // the port was taken between freePort and start: try another
      }
    }
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const url = `postgres://rsop@127.0.0.1:${port}/postgres`;
  let stopped = false;
  return {
    url,
    port,
    dir,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return `postgres://rsop@127.0.0.1:${port}/${name}`;
    },
    async restart() {
      // Asynchronous, so that the clients and servers of the test process keep running meanwhile.
      await runAsync("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
      await runAsync("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "60", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
