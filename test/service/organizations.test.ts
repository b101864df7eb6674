// The organization tree of a service (semantics T10–T24): depth rules, the seed's defaults, sibling
// names, what blocks a delete, the 2.0 and 1.0 shapes field by field, search and permissions. The
// registry runs over a real SQLite service database.
import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { Grant } from "../../src/service/auth/grant.js";
import { HttpError } from "../../src/service/httpError.js";
import type { RegistryStore } from "../../src/service/store/registryStore.js";
import type { Caller } from "../../src/service/tenants/organization.js";
import {
  createdShape,
  mine,
  organizationShape,
  panelAccount,
  searchEntities,
} from "../../src/service/tenants/orgShapes.js";
import { TenantRegistry } from "../../src/service/tenants/registry.js";
import { openRegistryStore, openTestSpace } from "./registrySpace.js";

const ADMIN_CALLER: Caller = {
  grant: { role: "admin", partitions: null },
  clientInfo: { ipAddress: "127.0.0.1", userAgent: "test" },
};
const T0 = Date.parse("2026-03-01T10:00:00.000Z");

async function refusal(p: Promise<unknown>): Promise<{ status: number; paths: string[] }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HttpError) return { status: e.status, paths: e.issues.map((i) => i.path) };
    throw e;
  }
  throw new Error("expected a refusal");
}

async function openRegistry(
  extra: Partial<Parameters<typeof TenantRegistry.open>[1]> = {},
): Promise<{ registry: TenantRegistry; store: RegistryStore; close: () => Promise<void> }> {
  const { store, close } = await openRegistryStore();
  let id = 0;
  const registry = await TenantRegistry.open(store, {
    now: () => T0,
    newId: () => `id-${++id}`,
    rootName: "Operator",
    ...extra,
  });
  return { registry, store, close };
}

/** root → dealer "Acme" → multi-site "Zeta HQ", legacy "alpha shop" with panel SN-1. */
async function tree() {
  const r = await openRegistry();
  const { registry } = r;
  const root = registry.root();
  const dealer = await registry.createOrganization(root.id, { name: "Acme" }, ADMIN_CALLER);
  const multi = await registry.createOrganization(
    dealer.id,
    { name: "Zeta HQ", useTouchMobileApp: true },
    ADMIN_CALLER,
  );
  const legacy = await registry.createOrganization(dealer.id, { name: "alpha shop", type: "legacy" }, ADMIN_CALLER);
  const panel = await registry.registerPanel(legacy.id, { id: "SN-1", name: "Front door" }, ADMIN_CALLER);
  return { ...r, root, dealer, multi, legacy, panel };
}

describe("the tree (T13)", () => {
  test("the root is created once, at first open, with the defaults (T12)", async () => {
    const { store, close } = await openRegistryStore();
    try {
      const a = await TenantRegistry.open(store, { now: () => T0 });
      const b = await TenantRegistry.open(store, { now: () => T0 });
      expect(b.root()).toEqual(a.root());
      expect(a.root()).toMatchObject({ parent: null, type: "root" });
      expect((await store.load()).organizations).toHaveLength(1);
    } finally {
      await close();
    }
  });

  test("depth decides the kind: dealer under the root, customer under a dealer, none under a customer", async () => {
    const { registry, root, dealer, multi, legacy, close } = await tree();
    try {
      expect(dealer.type).toBe("dealer");
      expect(multi.type).toBe("multi-site");
      expect(legacy.type).toBe("legacy");
      const v1 = await registry.createOrganization(dealer.id, { name: "Old" }, ADMIN_CALLER, "1.0");
      expect(v1.type).toBe("legacy");
      expect(await refusal(registry.createOrganization(root.id, { name: "D", type: "legacy" }, ADMIN_CALLER))).toEqual({
        status: 400,
        paths: ["body.type"],
      });
      expect(await refusal(registry.createOrganization(multi.id, { name: "x" }, ADMIN_CALLER))).toEqual({
        status: 409,
        paths: ["dealer_id"],
      });
      expect(
        await refusal(registry.createOrganization(dealer.id, { name: "x", type: "legacy" }, ADMIN_CALLER, "1.0")),
      ).toEqual({ status: 400, paths: ["body.type"] });
      expect(await refusal(registry.createOrganization("nope", { name: "x" }, ADMIN_CALLER))).toEqual({
        status: 404,
        paths: ["dealer_id"],
      });
      expect(registry.ancestors(multi.id)).toEqual([root.id, dealer.id]);
      expect(registry.ancestors(root.id)).toEqual([]);
    } finally {
      await close();
    }
  });

  test("a multi-site customer gets its tenant and an empty 2.0 system; a panel an empty 1.0 panel; all kept across a restart", async () => {
    const { space, file, close } = await openTestSpace();
    try {
      const registry = await TenantRegistry.open(space.registry, { now: () => T0 });
      const dealer = await registry.createOrganization(registry.root().id, { name: "Acme" }, ADMIN_CALLER);
      const multi = await registry.createOrganization(dealer.id, { name: "M" }, ADMIN_CALLER);
      const legacy = await registry.createOrganization(dealer.id, { name: "L", type: "legacy" }, ADMIN_CALLER);
      await registry.registerPanel(legacy.id, { id: "SN-7", name: "Gate" }, ADMIN_CALLER);
      const [system] = registry.tenantsOf(multi.id);
      expect(system).toMatchObject({ kind: "system", state: "active", organization: multi.id, info: { nodes: [] } });
      const stored = await space.tenant(system!.n).load();
      expect(stored).toMatchObject({ kind: "system", seq: 0, snapshot: { systemId: system!.key, holders: [] } });
      const panel = registry.tenantByKey("SN-7")!;
      expect(await space.tenant(panel.n).load()).toMatchObject({
        kind: "panel",
        seq: 0,
        snapshot: { serialNumber: "SN-7", name: "Gate" },
      });
      await space.close();
      const { openSqliteSpace } = await import("../../src/adapters/store/sqliteStore.js");
      const again = await openSqliteSpace(file);
      try {
        const reopened = await TenantRegistry.open(again.registry, { now: () => T0 });
        expect(reopened.root()).toEqual(registry.root());
        expect(
          reopened
            .children(dealer.id)
            .map((o) => o.name)
            .sort(),
        ).toEqual(["L", "M"]);
        expect(
          reopened
            .tenants()
            .map((t) => t.key)
            .sort(),
        ).toEqual([system!.key, "SN-7"].sort());
        expect(reopened.ancestors(multi.id)).toEqual([registry.root().id, dealer.id]);
      } finally {
        await again.close();
      }
    } finally {
      await close().catch(() => undefined);
    }
  });

  test("a customer may be created with a system to import, whose id must be free and not an accounts path", async () => {
    const { registry, dealer, multi, close } = await tree();
    try {
      const made = await registry.createOrganization(
        dealer.id,
        {
          name: "Imported",
          import: {
            format: "rsop-system/1",
            systemId: "sys-imp",
            cloudNodes: [{ id: "n1", name: "Hall", serialNumber: "S1" }],
          },
        },
        ADMIN_CALLER,
      );
      expect(registry.tenantsOf(made.id)[0]).toMatchObject({
        key: "sys-imp",
        info: { nodes: [{ id: "n1", name: "Hall", serialNumber: "S1", created: null }] },
      });
      const imp = (systemId: string, name: string) =>
        refusal(
          registry.createOrganization(dealer.id, { name, import: { format: "rsop-system/1", systemId } }, ADMIN_CALLER),
        );
      expect(await imp("api", "A")).toEqual({ status: 400, paths: ["body.import.systemId"] });
      expect(await imp("sys-imp", "B")).toEqual({ status: 409, paths: ["body.import.systemId"] });
      expect(await imp(registry.tenantsOf(multi.id)[0]!.key, "C")).toEqual({
        status: 409,
        paths: ["body.import.systemId"],
      });
      const broken = await refusal(
        registry.createOrganization(
          dealer.id,
          { name: "D", import: { format: "rsop-system/1", systemId: "ok", holders: 3 } },
          ADMIN_CALLER,
        ),
      );
      expect(broken.status).toBe(400);
      expect(broken.paths.every((p) => p.startsWith("body.import"))).toBe(true);
      expect(
        await refusal(registry.createOrganization(dealer.id, { name: "E", type: "legacy", import: {} }, ADMIN_CALLER)),
      ).toEqual({ status: 400, paths: ["body.import"] });
    } finally {
      await close();
    }
  });

  test("bodies: name 1–70 and not blank, booleans, unknown fields, each at body.<field>", async () => {
    const { registry, dealer, close } = await tree();
    try {
      const bad = (body: unknown) => refusal(registry.createOrganization(dealer.id, body, ADMIN_CALLER));
      expect(await bad({})).toEqual({ status: 400, paths: ["body.name"] });
      expect(await bad({ name: "   " })).toEqual({ status: 400, paths: ["body.name"] });
      expect(await bad({ name: "x".repeat(71) })).toEqual({ status: 400, paths: ["body.name"] });
      expect(await bad({ name: "ok", useBluetoothCredentials: "yes" })).toEqual({
        status: 400,
        paths: ["body.useBluetoothCredentials"],
      });
      expect(await bad({ name: "ok", colour: 1 })).toEqual({ status: 400, paths: ["body.colour"] });
      expect(await bad({ name: "ok", type: "hybrid" })).toEqual({ status: 400, paths: ["body.type"] });
      expect(await bad([])).toEqual({ status: 400, paths: ["body"] });
      const made = await registry.createOrganization(dealer.id, { name: "x".repeat(70) }, ADMIN_CALLER);
      expect(made.name).toHaveLength(70);
    } finally {
      await close();
    }
  });

  test("defaults on create; an update keeps what it omits; type is refused on update (T12)", async () => {
    const { registry, dealer, multi, close } = await tree();
    try {
      expect(multi.fields).toEqual({
        useBluetoothCredentials: true,
        useTouchMobileApp: true,
        allowCredentialResets: true,
      });
      await registry.updateOrganization(
        dealer.id,
        multi.id,
        { name: "Zeta", allowCredentialResets: false },
        ADMIN_CALLER,
      );
      expect(registry.organization(multi.id)).toMatchObject({
        name: "Zeta",
        fields: { useBluetoothCredentials: true, useTouchMobileApp: true, allowCredentialResets: false },
      });
      expect(
        await refusal(registry.updateOrganization(dealer.id, multi.id, { name: "Z", type: "legacy" }, ADMIN_CALLER)),
      ).toEqual({ status: 400, paths: ["body.type"] });
      expect(await refusal(registry.updateOrganization(dealer.id, multi.id, {}, ADMIN_CALLER))).toEqual({
        status: 400,
        paths: ["body.name"],
      });
      expect(await refusal(registry.updateOrganization(multi.id, dealer.id, { name: "q" }, ADMIN_CALLER))).toEqual({
        status: 404,
        paths: ["customer_id"],
      });
    } finally {
      await close();
    }
  });

  test("a name is unique among siblings, case-insensitively (T14)", async () => {
    const { registry, root, dealer, multi, legacy, close } = await tree();
    try {
      expect(await refusal(registry.createOrganization(dealer.id, { name: "ZETA hq" }, ADMIN_CALLER))).toEqual({
        status: 409,
        paths: ["body.name"],
      });
      expect(
        await refusal(registry.updateOrganization(dealer.id, legacy.id, { name: "zeta HQ" }, ADMIN_CALLER)),
      ).toEqual({ status: 409, paths: ["body.name"] });
      // Its own name, in another case, and the same name under another dealer are fine.
      await registry.updateOrganization(dealer.id, multi.id, { name: "ZETA HQ" }, ADMIN_CALLER);
      const other = await registry.createOrganization(root.id, { name: "Other" }, ADMIN_CALLER);
      await registry.createOrganization(other.id, { name: "Zeta HQ" }, ADMIN_CALLER);
    } finally {
      await close();
    }
  });

  test("a delete is refused with one issue per child, panel, and for holders (T16)", async () => {
    let holders = true;
    const r = await openRegistry({ hasHolders: async () => holders });
    const { registry } = r;
    try {
      const root = registry.root();
      const dealer = await registry.createOrganization(root.id, { name: "Acme" }, ADMIN_CALLER);
      const a = await registry.createOrganization(dealer.id, { name: "A" }, ADMIN_CALLER);
      const b = await registry.createOrganization(dealer.id, { name: "B", type: "legacy" }, ADMIN_CALLER);
      await registry.registerPanel(b.id, { id: "P1", name: "one" }, ADMIN_CALLER);
      await registry.registerPanel(b.id, { id: "P2", name: "two" }, ADMIN_CALLER);
      expect(await refusal(registry.deleteOrganization(root.id, dealer.id, ADMIN_CALLER))).toEqual({
        status: 409,
        paths: ["children.0", "children.1"],
      });
      expect(await refusal(registry.deleteOrganization(dealer.id, a.id, ADMIN_CALLER))).toEqual({
        status: 409,
        paths: ["holders"],
      });
      expect(await refusal(registry.deleteOrganization(dealer.id, b.id, ADMIN_CALLER))).toEqual({
        status: 409,
        paths: ["panels.0", "panels.1"],
      });
      holders = false;
      const system = registry.tenantsOf(a.id)[0]!;
      await registry.deleteOrganization(dealer.id, a.id, ADMIN_CALLER);
      expect(registry.organization(a.id)).toBeUndefined();
      expect(registry.tenant(system.n)).toBeUndefined();
      expect(registry.tenantByKey(system.key)).toBeUndefined();
      expect((await r.store.load()).tenants.map((t) => t.key)).toEqual(["P1", "P2"]);
    } finally {
      await r.close();
    }
  });
});

describe("panels (T15, T17)", () => {
  test("registered with a legacy customer only, serial numbers unique and DNS labels", async () => {
    const { registry, multi, legacy, close } = await tree();
    try {
      const bad = (org: string, body: unknown) => refusal(registry.registerPanel(org, body, ADMIN_CALLER));
      expect(await bad(multi.id, { id: "SN-2", name: "x" })).toEqual({ status: 409, paths: ["organization_id"] });
      expect(await bad(legacy.id, { id: "SN-1", name: "x" })).toEqual({ status: 409, paths: ["body.id"] });
      const system = registry.tenantsOf(multi.id)[0]!;
      expect(await bad(legacy.id, { id: system.key, name: "x" })).toEqual({ status: 409, paths: ["body.id"] });
      expect(await bad(legacy.id, { id: "-bad", name: "x" })).toEqual({ status: 400, paths: ["body.id"] });
      expect(await bad(legacy.id, { id: "a.b", name: "x" })).toEqual({ status: 400, paths: ["body.id"] });
      expect(await bad(legacy.id, { id: "OK1" })).toEqual({ status: 400, paths: ["body.name"] });
      expect(await bad(legacy.id, { id: "OK1", name: "x", reportBillingPolicy: "gold" })).toEqual({
        status: 400,
        paths: ["body.reportBillingPolicy"],
      });
      expect(await bad("nope", { id: "OK1", name: "x" })).toEqual({ status: 404, paths: ["organization_id"] });
    } finally {
      await close();
    }
  });

  test("update keeps what it omits; delete removes the tenant and its tokens; tokens are stored as digests", async () => {
    const { registry, legacy, close } = await tree();
    try {
      await registry.updatePanel("SN-1", { name: "Back door", reportBillingPolicy: "premium" }, ADMIN_CALLER);
      const t = registry.tenantByKey("SN-1")!;
      expect(panelAccount(t, "https://svc.example")).toEqual({
        id: "SN-1",
        name: "Back door",
        ouId: legacy.id,
        online: false,
        allowCredentialResets: true,
        credentialResetsPerMonth: 1,
        reportBillingPolicy: "premium",
        uri: "https://svc.example/panels/SN-1",
        registeredDate: "2026-03-01T10:00:00.000Z",
      });
      expect(await refusal(registry.updatePanel("SN-1", { reportBillingPolicy: "basic" }, ADMIN_CALLER))).toEqual({
        status: 400,
        paths: ["body.name"],
      });
      const token = await registry.createPanelToken("SN-1", ADMIN_CALLER);
      const digest = createHash("sha256").update(token).digest("hex");
      expect(registry.panelToken(digest)).toMatchObject({ tenant: t.n, role: "admin" });
      await registry.deletePanel("SN-1", ADMIN_CALLER);
      expect(registry.tenantByKey("SN-1")).toBeUndefined();
      expect(registry.panelToken(digest)).toBeUndefined();
      expect(await refusal(registry.deletePanel("SN-1", ADMIN_CALLER))).toEqual({ status: 404, paths: ["panel_id"] });
    } finally {
      await close();
    }
  });

  test("a panel may be registered with an import whose serial number is its id (T15)", async () => {
    const { space, close } = await openTestSpace();
    try {
      const registry = await TenantRegistry.open(space.registry, { now: () => T0 });
      const dealer = await registry.createOrganization(registry.root().id, { name: "D" }, ADMIN_CALLER);
      const legacy = await registry.createOrganization(dealer.id, { name: "L", type: "legacy" }, ADMIN_CALLER);
      const snapshot = { format: "rsop-panel/1", serialNumber: "IMP1", name: "Imported", persons: [] };
      expect(
        await refusal(registry.registerPanel(legacy.id, { id: "IMP2", name: "x", import: snapshot }, ADMIN_CALLER)),
      ).toEqual({ status: 400, paths: ["body.import.serialNumber"] });
      const broken = await refusal(
        registry.registerPanel(legacy.id, { id: "IMP1", name: "x", import: { ...snapshot, persons: 5 } }, ADMIN_CALLER),
      );
      expect(broken.status).toBe(400);
      expect(broken.paths.every((p) => p.startsWith("body.import"))).toBe(true);
      const t = await registry.registerPanel(legacy.id, { id: "IMP1", name: "Registered" }, ADMIN_CALLER);
      await registry.deletePanel("IMP1", ADMIN_CALLER);
      const again = await registry.registerPanel(
        legacy.id,
        { id: "IMP1", name: "Again", import: snapshot },
        ADMIN_CALLER,
      );
      expect(again.n).not.toBe(t.n);
      expect(await space.tenant(again.n).load()).toMatchObject({ kind: "panel", snapshot: { serialNumber: "IMP1" } });
      expect(await space.tenant(t.n).load()).toBeNull();
    } finally {
      await close();
    }
  });

  test("a panel being migrated is not deleted (T17)", async () => {
    const r = await openRegistry({ migrating: async () => true });
    try {
      const root = r.registry.root();
      const dealer = await r.registry.createOrganization(root.id, { name: "D" }, ADMIN_CALLER);
      const legacy = await r.registry.createOrganization(dealer.id, { name: "L", type: "legacy" }, ADMIN_CALLER);
      await r.registry.registerPanel(legacy.id, { id: "M1", name: "m" }, ADMIN_CALLER);
      expect(await refusal(r.registry.deletePanel("M1", ADMIN_CALLER))).toEqual({ status: 409, paths: ["panel_id"] });
    } finally {
      await r.close();
    }
  });
});

const VIEW_ADMIN = { grant: ADMIN_CALLER.grant, permissions: [] as Grant[], publicUrl: "https://svc.example/" };

describe("shapes, field by field (T18–T21)", () => {
  test("2.0 organizations: keys in the seed's order, systemId only on a multi-site customer", async () => {
    const { registry, root, dealer, multi, legacy, close } = await tree();
    try {
      const system = registry.tenantsOf(multi.id)[0]!;
      await registry.setTenantInfo(system.n, {
        nodes: [{ id: "node-1", name: "Lobby", serialNumber: "SER9", created: "2026-01-01T00:00:00.000Z" }],
      });
      const flags = { useBluetoothCredentials: true, useTouchMobileApp: false, allowCredentialResets: true };
      const d = organizationShape(registry, registry.organization(dealer.id)!, "2.0", VIEW_ADMIN);
      expect(Object.keys(d)).toEqual([
        "id",
        "name",
        "useBluetoothCredentials",
        "useTouchMobileApp",
        "allowCredentialResets",
        "ancestors",
        "parent",
        "children",
        "panels",
        "userPermissionLevel",
        "parentPermissionLevel",
        "permissions",
      ]);
      expect(d).toEqual({
        id: dealer.id,
        name: "Acme",
        ...flags,
        ancestors: [root.id],
        parent: root.id,
        children: [
          { id: legacy.id, name: "alpha shop", ...flags },
          { id: multi.id, name: "Zeta HQ", systemId: system.key, ...flags, useTouchMobileApp: true },
        ],
        panels: [],
        userPermissionLevel: "admin",
        parentPermissionLevel: "admin",
        permissions: [],
      });
      const m = organizationShape(registry, registry.organization(multi.id)!, "2.0", VIEW_ADMIN);
      expect(Object.keys(m).slice(0, 3)).toEqual(["id", "name", "systemId"]);
      expect(m.ancestors).toEqual([root.id, dealer.id]);
      expect(m.panels).toEqual([
        { uuid: "node-1", name: "Lobby", id: "SER9", registeredDate: "2026-01-01T00:00:00.000Z", online: false },
      ]);
      const l = organizationShape(registry, registry.organization(legacy.id)!, "2.0", VIEW_ADMIN);
      expect(l).not.toHaveProperty("systemId");
      expect(l.panels).toEqual([
        { uuid: null, name: "Front door", id: "SN-1", registeredDate: "2026-03-01T10:00:00.000Z", online: false },
      ]);
      const r = organizationShape(registry, root, "2.0", VIEW_ADMIN);
      expect(r.parent).toBeNull();
      expect(r.ancestors).toEqual([]);
      expect(r).not.toHaveProperty("parentPermissionLevel");
    } finally {
      await close();
    }
  });

  test("1.0 organizations: no systemId anywhere, readers [] after panels, 1.0 panels with their uri", async () => {
    const { registry, dealer, multi, legacy, close } = await tree();
    try {
      const d = organizationShape(registry, registry.organization(dealer.id)!, "1.0", VIEW_ADMIN);
      expect(Object.keys(d)).toEqual([
        "id",
        "name",
        "useBluetoothCredentials",
        "useTouchMobileApp",
        "allowCredentialResets",
        "ancestors",
        "parent",
        "children",
        "panels",
        "readers",
        "userPermissionLevel",
        "parentPermissionLevel",
        "permissions",
      ]);
      expect((d.children as object[]).every((c) => !("systemId" in c))).toBe(true);
      expect(organizationShape(registry, registry.organization(multi.id)!, "1.0", VIEW_ADMIN)).not.toHaveProperty(
        "systemId",
      );
      const l = organizationShape(registry, registry.organization(legacy.id)!, "1.0", VIEW_ADMIN);
      expect(l.readers).toEqual([]);
      expect(l.panels).toEqual([
        {
          id: "SN-1",
          name: "Front door",
          online: false,
          allowCredentialResets: true,
          credentialResetsPerMonth: 1,
          reportBillingPolicy: "basic",
          uri: "https://svc.example/panels/SN-1",
          registeredDate: "2026-03-01T10:00:00.000Z",
        },
      ]);
    } finally {
      await close();
    }
  });

  test("the 201 of a create is the seed's partial organization", async () => {
    const { registry, multi, legacy, close } = await tree();
    try {
      const system = registry.tenantsOf(multi.id)[0]!;
      expect(createdShape(registry, multi, "2.0", VIEW_ADMIN)).toEqual({
        id: multi.id,
        name: "Zeta HQ",
        systemId: system.key,
        allowCredentialResets: true,
        children: [],
        panels: [],
        permissions: [],
      });
      expect(Object.keys(createdShape(registry, legacy, "1.0", VIEW_ADMIN))).toEqual([
        "id",
        "name",
        "allowCredentialResets",
        "children",
        "panels",
        "readers",
        "permissions",
      ]);
    } finally {
      await close();
    }
  });

  test("permissions are the tokens-file entries naming the organization; levels follow reach (T11)", async () => {
    const { registry, root, dealer, multi, legacy, close } = await tree();
    try {
      const onDealer: Grant = {
        role: "integrator",
        partitions: null,
        organizations: new Set([dealer.id]),
        user: { id: "u1", firstName: "Ada", lastName: "Byron", email: "ada@example.test" },
      };
      const everywhere: Grant = { role: "admin", partitions: null };
      const onLegacy: Grant = { role: "integrator", partitions: null, organizations: new Set([legacy.id]) };
      const permissions = [everywhere, onDealer, onLegacy];
      const view = { grant: onLegacy, permissions, publicUrl: "http://x" };
      const d = organizationShape(registry, registry.organization(dealer.id)!, "2.0", view);
      expect(d.permissions).toEqual([
        { _id: "#2", userId: "u1", email: "ada@example.test", name: "Ada Byron", role: "integrator" },
      ]);
      expect(d.userPermissionLevel).toBe("guest");
      expect(d.parentPermissionLevel).toBe("guest");
      const l = organizationShape(registry, registry.organization(legacy.id)!, "2.0", view);
      expect(l.userPermissionLevel).toBe("integrator");
      expect(l.parentPermissionLevel).toBe("guest");
      expect(l.permissions).toEqual([{ _id: "#3", userId: null, email: null, name: null, role: "integrator" }]);
      expect(organizationShape(registry, root, "2.0", view).permissions).toEqual([
        { _id: "#1", userId: null, email: null, name: null, role: "admin" },
      ]);
      const m = organizationShape(registry, registry.organization(multi.id)!, "2.0", { ...view, grant: onDealer });
      expect([m.userPermissionLevel, m.parentPermissionLevel]).toEqual(["integrator", "integrator"]);
      expect(mine(registry, onDealer, root).map((o) => o.id)).toEqual([dealer.id]);
      expect(mine(registry, everywhere, root).map((o) => o.id)).toEqual([root.id]);
    } finally {
      await close();
    }
  });
});

describe("search (T23)", () => {
  test("case-insensitive substring of names and serial numbers in the subtree, itself excluded, ordered", async () => {
    const { registry, root, dealer, multi, legacy, close } = await tree();
    try {
      const system = registry.tenantsOf(multi.id)[0]!;
      await registry.setTenantInfo(system.n, {
        nodes: [
          { id: "node-1", name: "Lobby", serialNumber: "SER9", created: null },
          { id: "node-2", name: "Attic", serialNumber: null, created: null },
        ],
      });
      expect(searchEntities(registry, [dealer.id], "", "2.0", false)).toEqual([
        { _id: legacy.id, type: "ou", name: "alpha shop" },
        { _id: "node-2", type: "panel", name: "Attic", uuid: "node-2", systemId: system.key },
        { _id: "SN-1", type: "panel", name: "Front door", uuid: null },
        { _id: "SER9", type: "panel", name: "Lobby", uuid: "node-1", systemId: system.key },
        { _id: multi.id, type: "ou", name: "Zeta HQ", systemId: system.key },
      ]);
      expect(searchEntities(registry, [dealer.id], "ser", "1.0", false)).toEqual([
        { _id: "SER9", type: "panel", name: "Lobby" },
      ]);
      expect(searchEntities(registry, [dealer.id], "sn-", "1.0", false)).toEqual([
        { _id: "SN-1", type: "panel", name: "Front door" },
      ]);
      expect(searchEntities(registry, [dealer.id], "ACME", "2.0", false)).toEqual([]);
      expect(searchEntities(registry, [dealer.id], "ACME", "2.0", true)).toEqual([
        { _id: dealer.id, type: "ou", name: "Acme" },
      ]);
      // Overlapping roots list each entity once.
      expect(searchEntities(registry, [root.id, dealer.id], "zeta", "1.0", true)).toEqual([
        { _id: multi.id, type: "ou", name: "Zeta HQ" },
      ]);
    } finally {
      await close();
    }
  });
});
