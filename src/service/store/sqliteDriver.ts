// better-sqlite3, the optional peer both SQLite files use (the service's --data and a cloud node's
// data file): loaded here alone, on first use, so that neither embedding the engine nor a service
// on PostgreSQL ever needs it.

/** The driver module's type (the module itself is loaded by loadSqliteDriver). */
export type BetterSqlite = typeof import("better-sqlite3");

/**
 * Loads better-sqlite3 on first use.
 * @param missing - what the caller's user is told when the package is not installed.
 * @param fail - makes the caller's own error from a message.
 * @throws what `fail` makes, when the package is missing or cannot be loaded.
 */
export async function loadSqliteDriver(missing: string, fail: (message: string) => Error): Promise<BetterSqlite> {
  try {
    const m = (await import("better-sqlite3")) as unknown as { default?: BetterSqlite };
    return (m.default ?? m) as BetterSqlite;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") throw fail(missing);
    throw fail(`better-sqlite3 could not be loaded: ${(e as Error).message}`);
  }
}
