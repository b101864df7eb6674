// The RegistryStore the registry's tests run over: a real SQLite service database in a temporary directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteSpace } from "../../src/adapters/store/sqliteStore.js";
import type { RegistryStore } from "../../src/service/store/registryStore.js";
import type { StoreSpace } from "../../src/service/store/store.js";

/** A new SQLite space in its own directory; `close` closes it and removes the directory. */
export async function openTestSpace(): Promise<{ space: StoreSpace; file: string; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "rsop-orgs-"));
  const file = join(dir, "service.db");
  const space = await openSqliteSpace(file);
  return {
    space,
    file,
    close: async () => {
      await space.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function openRegistryStore(): Promise<{ store: RegistryStore; close: () => Promise<void> }> {
  const { space, close } = await openTestSpace();
  return { store: space.registry, close };
}
