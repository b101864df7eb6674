// The webhook scopes of the service's organizations, read from its registry (T42): a multi-site
// customer's events are its system's (2.0, node ids its cloud nodes'), a legacy customer's its
// panels' (1.0, node ids their serial numbers); the root and the dealers have no nodes.
import type { OrganizationRow, TenantRow } from "../store/registryStore.js";
import type { WebhookScope, WebhookScopes } from "./subscriptionRegistry.js";

/** What the scopes read of the registry (tenants/registry.ts `TenantRegistry` has it). */
export interface OrganizationTree {
  organization(id: string): OrganizationRow | undefined;
  /** Its ancestors' ids, root first. */
  ancestors(id: string): string[];
  tenantsOf(organization: string): TenantRow[];
  tenant(n: number): TenantRow | undefined;
}

/** The cloud-node ids of a system tenant's summary (`info.nodes`, tenants/tenantSummary.ts). */
function summaryNodeIds(t: TenantRow): string[] {
  const nodes = (t.info as { nodes?: unknown } | null)?.nodes;
  return Array.isArray(nodes)
    ? nodes.flatMap((n) => (typeof (n as { id?: unknown })?.id === "string" ? [(n as { id: string }).id] : []))
    : [];
}

/**
 * The scopes of the registry's organizations, read at each use (the tree changes while the service
 * runs). Subscriptions stored without an organization are `embedded`'s, default the organization of
 * tenant 1 (the system or panel of a database made by a server of one system or panel, T40).
 */
export function registryScopes(tree: OrganizationTree, embedded?: string): WebhookScopes {
  return {
    organization(id: string): WebhookScope | undefined {
      const org = tree.organization(id);
      if (org === undefined) return undefined;
      const generation = org.type === "multi-site" ? "2.0" : org.type === "legacy" ? "1.0" : null;
      return {
        generation,
        ancestors: tree.ancestors(id),
        nodeIds: () =>
          new Set(
            generation === null
              ? []
              : tree
                  .tenantsOf(id)
                  .flatMap((t) => (t.kind === "panel" ? [t.key] : t.kind === "system" ? summaryNodeIds(t) : [])),
          ),
      };
    },
    get embedded() {
      return embedded ?? tree.tenant(1)?.organization;
    },
  };
}
