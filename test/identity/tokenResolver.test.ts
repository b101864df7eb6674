// The one resolver of the service's tokens (semantics I5, I6) over a real SQLite registry and the
// service's real keys: an ID token resolves to its user's grant as the permissions are now, a system
// token only on its system, a token of another shape or signer to nothing; the cache of verified
// tokens is bounded whatever a client sends, and keyed by digest.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, test } from "vitest";
import { openSqliteSpace } from "../../src/adapters/store/sqliteStore.js";
import { createUser } from "../../src/service/identity/accounts.js";
import { KIND, type PermissionRecord } from "../../src/service/identity/records.js";
import { openSigningKeys } from "../../src/service/identity/signingKeys.js";
import { TokenResolver, systemAudience } from "../../src/service/identity/tokenResolver.js";
import { TenantRegistry } from "../../src/service/tenants/registry.js";
import { dataDir } from "../http/dataSupport.js";
import { removeTempDirs } from "../http/fixtures.js";

afterAll(removeTempDirs);

describe("TokenResolver", () => {
  test("ID and system tokens resolve to the grant of now; others to nothing; the cache stays bounded (I5, I6)", async () => {
    const space = await openSqliteSpace(dataDir().db);
    try {
      let clock = Date.parse("2026-05-01T08:00:00Z");
      const registry = await TenantRegistry.open(space.registry, { now: () => clock });
      const keys = openSigningKeys(registry, { now: () => clock });
      const resolver = new TokenResolver({ registry, keys, staticGrant: () => null, now: () => clock, maxCached: 50 });
      const user = await createUser(registry, { email: "kim@example.test", password: "correct horse battery" });
      const idToken = await keys.sign({ sub: user.id, aud: "client" }, "http://x", 300);
      const systemToken = await keys.sign({ sub: user.id, aud: systemAudience("sys-1") }, "http://x", 3600);

      await resolver.prepare(idToken);
      await resolver.prepare(systemToken);
      // No permission yet: a valid token with a grant that reaches nothing.
      expect(resolver.accountGrant(idToken)?.organizations).toEqual(new Set());
      const permission: PermissionRecord = {
        id: randomUUID(),
        organization: registry.root().id,
        email: user.email,
        name: "",
        role: "integrator",
        partitions: null,
        userId: user.id,
        created: new Date(clock).toISOString(),
        accepted: null,
      };
      await registry.updateRecords(() => ({
        changes: [{ op: "putRecord", kind: KIND.permission, id: permission.id, value: permission, ifVersion: 0 }],
        result: undefined,
      }));
      // The permission made after the token counts at once.
      expect(resolver.accountGrant(idToken)?.role).toBe("integrator");
      expect(resolver.accountGrant(systemToken)).toBeNull();
      expect(resolver.systemGrant(systemToken, "sys-1")?.role).toBe("integrator");
      expect(resolver.systemGrant(systemToken, "sys-2")).toBeNull();
      expect(resolver.systemGrant(idToken, "sys-1")).toBeNull();
      expect(resolver.isSystemToken(systemToken)).toBe(true);

      // Tampered, foreign-signed and oversized tokens resolve to nothing.
      const [h, p, sig] = idToken.split(".");
      const tampered = `${h}.${p!.slice(0, -2)}${p!.endsWith("A") ? "B" : "A"}${p!.slice(-1)}.${sig}`;
      await resolver.prepare(tampered);
      expect(resolver.accountGrant(tampered)).toBeNull();
      const huge = `${h}.${"A".repeat(10_000)}.${sig}`;
      await resolver.prepare(huge);
      expect(resolver.accountGrant(huge)).toBeNull();

      // A flood of distinct JWT-shaped tokens: the cache keeps at most its bound.
      for (let i = 0; i < 200; i++) await resolver.prepare(`${h}.${p}x${i}.${sig}`);
      expect(resolver.cached).toBeLessThanOrEqual(50);

      // Expired by the clock: nothing (and the verified entry is dropped).
      clock += 301_000;
      await resolver.prepare(idToken);
      expect(resolver.accountGrant(idToken)).toBeNull();
      // The flood pushed the system token out of the cache: the next request verifies it again.
      await resolver.prepare(systemToken);
      expect(resolver.systemGrant(systemToken, "sys-1")?.role).toBe("integrator");
    } finally {
      await space.close();
    }
  });
});
