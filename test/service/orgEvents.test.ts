// The organization and panel events (semantics T25–T28): the seed's body fields letter for letter,
// both generations of each organization change, and the registry committing their outbox rows with
// the change itself (a real SQLite service database).
import { describe, expect, test } from "vitest";
import { type OrgEvent, organizationEvents, panelEvent } from "../../src/events/orgEvents.js";
import type { OutboxEntry } from "../../src/service/store/webhookStore.js";
import type { Caller } from "../../src/service/tenants/organization.js";
import { TenantRegistry } from "../../src/service/tenants/registry.js";
import { openTestSpace } from "./registrySpace.js";

const CTX = {
  clientInfo: { ipAddress: "203.0.113.9", userAgent: "curl/8" },
  user: { firstName: "Ada", id: "u1", lastName: "Byron" },
  occurredAt: "2026-03-01T10:00:00.000Z",
  newId: (() => {
    let n = 0;
    return () => `e${++n}`;
  })(),
};
const ORG = {
  id: "c1",
  name: "Shop",
  parent: "d1",
  ancestors: ["r", "d1"],
  systemId: "s1",
  useBluetoothCredentials: true,
  useTouchMobileApp: false,
};

describe("bodies (T25, T26)", () => {
  test("organization.created and ou.created", () => {
    const [v2, v1] = organizationEvents("created", ORG, CTX);
    expect(v2).toEqual({
      generation: "2.0",
      about: "organization",
      kind: "created",
      organization: "c1",
      ancestors: ["r", "d1"],
      body: {
        eventId: "e1",
        occurredAt: "2026-03-01T10:00:00.000Z",
        topic: "organization.created",
        clientInfo: { ipAddress: "203.0.113.9", userAgent: "curl/8" },
        user: { firstName: "Ada", id: "u1", lastName: "Byron" },
        id: "c1",
        name: "Shop",
        parent: "d1",
        systemId: "s1",
        useBluetoothCredentials: true,
        useTouchMobileApp: false,
      },
    });
    expect(v1.generation).toBe("1.0");
    expect(v1.body).toEqual({
      eventId: "e2",
      occurredAt: "2026-03-01T10:00:00.000Z",
      topic: "ou.created",
      clientInfo: { ipAddress: "203.0.113.9", userAgent: "curl/8" },
      user: { firstName: "Ada", id: "u1", lastName: "Byron" },
      id: "c1",
      name: "Shop",
      parent: "d1",
      useBluetoothCredentials: true,
      useTouchMobileApp: false,
      intercoms: [],
    });
  });

  test("updated: 2.0 carries only the flags given; 1.0 all, with themes", () => {
    const [v2, v1] = organizationEvents("updated", { ...ORG, systemId: null }, CTX, { allowCredentialResets: false });
    const { eventId: _a, ...b2 } = v2.body;
    expect(b2).toEqual({
      occurredAt: "2026-03-01T10:00:00.000Z",
      topic: "organization.updated",
      clientInfo: CTX.clientInfo,
      user: CTX.user,
      id: "c1",
      name: "Shop",
      parent: "d1",
      systemId: null,
      allowCredentialResets: false,
    });
    const { eventId: _b, ...b1 } = v1.body;
    expect(b1).toEqual({
      occurredAt: "2026-03-01T10:00:00.000Z",
      topic: "ou.updated",
      clientInfo: CTX.clientInfo,
      user: CTX.user,
      id: "c1",
      name: "Shop",
      parent: "d1",
      useBluetoothCredentials: true,
      useTouchMobileApp: false,
      intercoms: [],
      themes: [],
    });
  });

  test("deleted carries the created fields (2.0) and themes (1.0)", () => {
    const [v2, v1] = organizationEvents("deleted", ORG, CTX);
    expect(Object.keys(v2.body)).toEqual([
      "eventId",
      "occurredAt",
      "topic",
      "clientInfo",
      "user",
      "id",
      "name",
      "parent",
      "systemId",
      "useBluetoothCredentials",
      "useTouchMobileApp",
    ]);
    expect(v1.body.topic).toBe("ou.deleted");
    expect(v1.body.themes).toEqual([]);
  });

  test("panel.created|updated|deleted: id (serial number), name, ou", () => {
    const e = panelEvent("updated", { serialNumber: "SN-1", name: "Door", ou: "c1", ancestors: ["r", "d1"] }, CTX);
    expect(e).toMatchObject({ generation: "1.0", about: "panel", kind: "updated", organization: "c1" });
    const { eventId: _e, ...body } = e.body;
    expect(body).toEqual({
      occurredAt: "2026-03-01T10:00:00.000Z",
      topic: "panel.updated",
      clientInfo: CTX.clientInfo,
      user: CTX.user,
      id: "SN-1",
      name: "Door",
      ou: "c1",
    });
  });
});

describe("the registry emits them with each change (T27)", () => {
  test("outbox rows are committed with the change; a token without a user gives null fields", async () => {
    const { space, close } = await openTestSpace();
    try {
      const webhooks = space.webhooks!;
      await webhooks.putSubscription("sub-2.0", { name: "two" }, { organization: "x", generation: "2.0" });
      await webhooks.putSubscription("sub-1.0", { name: "one" }, { organization: "x", generation: "1.0" });
      const seen: OrgEvent[] = [];
      const stored: OutboxEntry[] = [];
      const registry = await TenantRegistry.open(space.registry, {
        now: () => Date.parse("2026-03-01T10:00:00.000Z"),
        outbox: (events) => {
          seen.push(...events);
          return events.map((e) => ({
            subscriptionId: `sub-${e.generation}`,
            kind: "change" as const,
            event: e.body as unknown as OutboxEntry["event"],
          }));
        },
        stored: (entries) => stored.push(...entries),
      });
      const by: Caller = {
        grant: { role: "admin", partitions: null },
        clientInfo: { ipAddress: "127.0.0.1", userAgent: null },
      };
      const root = registry.root();
      const dealer = await registry.createOrganization(root.id, { name: "D" }, by);
      const shop = await registry.createOrganization(dealer.id, { name: "S", type: "legacy" }, by);
      await registry.registerPanel(shop.id, { id: "P1", name: "Door" }, by);
      await registry.updateOrganization(dealer.id, shop.id, { name: "S2", useTouchMobileApp: true }, by);
      await registry.deletePanel("P1", by);
      await registry.deleteOrganization(dealer.id, shop.id, by);
      expect(seen.map((e) => e.body.topic)).toEqual([
        "organization.created",
        "ou.created",
        "organization.created",
        "ou.created",
        "panel.created",
        "organization.updated",
        "ou.updated",
        "panel.deleted",
        "organization.deleted",
        "ou.deleted",
      ]);
      expect(seen[2]).toMatchObject({ organization: shop.id, ancestors: [root.id, dealer.id] });
      expect(seen[2]!.body).toMatchObject({
        user: { firstName: null, id: null, lastName: null },
        clientInfo: { ipAddress: "127.0.0.1", userAgent: null },
        systemId: null,
      });
      expect(seen[5]!.body).toMatchObject({ name: "S2", useTouchMobileApp: true });
      expect(seen[5]!.body).not.toHaveProperty("useBluetoothCredentials");
      expect(new Set(seen.map((e) => e.body.eventId)).size).toBe(seen.length);
      // Every event's row is in the database's outbox, in order, and was told once stored.
      const rows = [...(await webhooks.pending("sub-2.0", 100)), ...(await webhooks.pending("sub-1.0", 100))];
      expect(rows.map((r) => (r.event as unknown as { eventId: string }).eventId).sort()).toEqual(
        seen.map((e) => e.body.eventId).sort(),
      );
      expect(stored).toHaveLength(seen.length);
    } finally {
      await close();
    }
  });

  test("a refused change emits nothing and commits nothing", async () => {
    const { space, close } = await openTestSpace();
    try {
      let calls = 0;
      const registry = await TenantRegistry.open(space.registry, {
        outbox: () => {
          calls++;
          return [];
        },
      });
      const rev = registry.rev;
      const by: Caller = {
        grant: { role: "admin", partitions: null },
        clientInfo: { ipAddress: null, userAgent: null },
      };
      await expect(registry.createOrganization(registry.root().id, { name: "" }, by)).rejects.toMatchObject({
        status: 400,
      });
      expect(calls).toBe(0);
      expect((await space.registry.load()).rev).toBe(rev);
    } finally {
      await close();
    }
  });
});
