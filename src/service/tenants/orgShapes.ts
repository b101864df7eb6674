// The answers of the accounts host, pure (semantics T18–T24): organizations in their 2.0 and 1.0
// shapes (keys in the seed's order), their children and panels, a panel's accounts view, search
// entities, and permissions: the tokens file's, then the permission records of identity (I49).
import { type Grant, grantAt } from "../auth/grant.js";
import { KIND, type PermissionRecord } from "../identity/records.js";
import { DEFAULT_RESETS_PER_MONTH } from "../identity/selfHelp.js";
import type { OrganizationRow, RecordRow, TenantRow } from "../store/registryStore.js";
import { type Generation, flagsOf, nodesOf, panelInfoOf } from "./organization.js";

/** What the shapes read of the tree (TenantRegistry has it). */
export interface OrgTree {
  organization(id: string): OrganizationRow | undefined;
  children(id: string): OrganizationRow[];
  /** Root first; [] for the root and an unknown id. */
  ancestors(id: string): string[];
  tenantsOf(orgId: string): TenantRow[];
  /** Identity records of a kind (TenantRegistry has them); absent: no permission records. */
  records?(kind: string): Iterable<RecordRow>;
  /** Counts the tree's commits (TenantRegistry has it): what is read of records is kept until it changes. */
  readonly rev?: number;
}

/** Who looks: the caller's grant, every permission of the tokens file, and the service's address. */
export interface Viewer {
  readonly grant: Grant;
  readonly permissions: readonly Grant[];
  /** `--public-url`, else the request's origin: a panel's `uri` is `${publicUrl}/panels/${serial}` (T21). */
  readonly publicUrl: string;
}

type Json = Record<string, unknown>;

/** Name (case-insensitively), then id: the order of every organization list (T19). */
export function byNameThenId(a: { name: string; id: string }, b: { name: string; id: string }): number {
  const x = a.name.toLowerCase();
  const y = b.name.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The 2.0 system of a multi-site customer (the active one), or undefined. */
export function systemOf(tree: OrgTree, org: OrganizationRow): TenantRow | undefined {
  if (org.type !== "multi-site") return undefined;
  return tree.tenantsOf(org.id).find((t) => t.kind === "system" && t.state === "active");
}

/** A legacy customer's registered panels, by serial number. */
export function panelsOf(tree: OrgTree, org: OrganizationRow): TenantRow[] {
  return tree
    .tenantsOf(org.id)
    .filter((t) => t.kind === "panel" && t.state === "active")
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** `children`: partial organizations (2.0 with `systemId` when present), by name then id. */
export function childrenShape(tree: OrgTree, org: OrganizationRow, generation: Generation): Json[] {
  return tree
    .children(org.id)
    .sort(byNameThenId)
    .map((c) => {
      const system = generation === "2.0" ? systemOf(tree, c) : undefined;
      return { id: c.id, name: c.name, ...(system !== undefined ? { systemId: system.key } : {}), ...flagsOf(c) };
    });
}

/** A panel's `uri` (T21). */
export function panelUri(publicUrl: string, serial: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/panels/${encodeURIComponent(serial)}`;
}

/**
 * `panels` of an organization (T20): a multi-site customer's are its system's cloud nodes, a legacy
 * customer's its registered panels, a dealer's and the root's none. `online` is false until nodes report.
 */
export function panelsShape(tree: OrgTree, org: OrganizationRow, generation: Generation, publicUrl: string): Json[] {
  const system = systemOf(tree, org);
  if (system !== undefined) {
    const flags = flagsOf(org);
    const nodes = nodesOf(system).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return nodes.map((n) =>
      generation === "2.0"
        ? { uuid: n.id, name: n.name, id: n.serialNumber, registeredDate: n.created, online: false }
        : {
            id: n.serialNumber ?? n.id,
            name: n.name,
            online: false,
            allowCredentialResets: flags.allowCredentialResets,
            credentialResetsPerMonth: n.credentialResetsPerMonth ?? DEFAULT_RESETS_PER_MONTH,
            reportBillingPolicy: "basic",
            uri: null,
            registeredDate: n.created,
          },
    );
  }
  return panelsOf(tree, org).map((t) => {
    const info = panelInfoOf(t);
    return generation === "2.0"
      ? { uuid: null, name: info.name, id: t.key, registeredDate: t.created, online: false }
      : {
          id: t.key,
          name: info.name,
          online: false,
          allowCredentialResets: info.allowCredentialResets,
          credentialResetsPerMonth: info.credentialResetsPerMonth,
          reportBillingPolicy: info.reportBillingPolicy,
          uri: panelUri(publicUrl, t.key),
          registeredDate: t.created,
        };
  });
}

/** A registered panel in the accounts view (route 20). */
export function panelAccount(tenant: TenantRow, publicUrl: string): Json {
  const info = panelInfoOf(tenant);
  return {
    id: tenant.key,
    name: info.name,
    ouId: tenant.organization,
    online: false,
    allowCredentialResets: info.allowCredentialResets,
    credentialResetsPerMonth: info.credentialResetsPerMonth,
    reportBillingPolicy: info.reportBillingPolicy,
    uri: panelUri(publicUrl, tenant.key),
    registeredDate: tenant.created,
  };
}

/** Whether a permission names an organization: it lists it, or it lists none (the root's, T10). */
function names(p: Grant, org: OrganizationRow): boolean {
  const orgs = p.organizations;
  return orgs === undefined || orgs === null ? org.type === "root" : orgs.has(org.id);
}

/**
 * `permissions` (T11): the tokens-file entries that name the organization, in file order;
 * `permissions` is every grant of the file in its order (`_id` `#n` is the n-th entry).
 */
export function permissionsOf(org: OrganizationRow, permissions: readonly Grant[]): Json[] {
  return permissions.flatMap((p, i) =>
    names(p, org)
      ? [
          {
            _id: `#${i + 1}`,
            userId: p.user?.id ?? null,
            email: p.user?.email ?? null,
            name: p.user !== undefined ? `${p.user.firstName} ${p.user.lastName}`.trim() : null,
            role: p.role,
          },
        ]
      : [],
  );
}

/** Permission records by organization, per tree and revision: lists of thousands of organizations read them. */
const byOrganization = new WeakMap<OrgTree, { rev: number; map: Map<string, PermissionRecord[]> }>();

/** The permission records on one organization (I49), oldest first, then by id. */
export function recordPermissionsOf(tree: OrgTree, orgId: string): PermissionRecord[] {
  const rev = tree.rev;
  let cached = rev === undefined ? undefined : byOrganization.get(tree);
  if (cached === undefined || cached.rev !== rev) {
    const map = new Map<string, PermissionRecord[]>();
    for (const r of tree.records?.(KIND.permission) ?? []) {
      const p = r.value as PermissionRecord;
      const list = map.get(p.organization);
      if (list === undefined) map.set(p.organization, [p]);
      else list.push(p);
    }
    for (const list of map.values())
      list.sort((a, b) =>
        a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
      );
    cached = { rev: rev ?? -1, map };
    if (rev !== undefined) byOrganization.set(tree, cached);
  }
  return [...(cached.map.get(orgId) ?? [])];
}

/**
 * The caller's level on an organization (T11, I49): its role there as `grantAt` decides it (the
 * highest of its permissions on the organization or an ancestor; a tokens-file grant's role when it
 * reaches it), else `guest` (it sees the organization through nothing above it).
 */
export function permissionLevel(tree: OrgTree, grant: Grant, orgId: string): string {
  return grantAt(grant, orgId, (id) => tree.ancestors(id))?.role ?? "guest";
}

/** An organization in the 2.0 shape (`/api/organizations…`) or the 1.0 shape (`/api/ous…`), keys in the seed's order. */
export function organizationShape(tree: OrgTree, org: OrganizationRow, generation: Generation, viewer: Viewer): Json {
  const system = generation === "2.0" ? systemOf(tree, org) : undefined;
  return {
    id: org.id,
    name: org.name,
    ...(system !== undefined ? { systemId: system.key } : {}),
    ...flagsOf(org),
    ancestors: tree.ancestors(org.id),
    parent: org.parent,
    children: childrenShape(tree, org, generation),
    panels: panelsShape(tree, org, generation, viewer.publicUrl),
    ...(generation === "1.0" ? { readers: [] } : {}),
    userPermissionLevel: permissionLevel(tree, viewer.grant, org.id),
    ...(org.parent !== null ? { parentPermissionLevel: permissionLevel(tree, viewer.grant, org.parent) } : {}),
    permissions: [
      ...permissionsOf(org, viewer.permissions),
      ...recordPermissionsOf(tree, org.id).map((p) => ({
        _id: p.id,
        userId: p.userId,
        email: p.email,
        name: p.name,
        role: p.role,
      })),
    ],
  };
}

/** The 201 answer of a customer create (route 5 and 14): the seed's partial organization. */
export function createdShape(tree: OrgTree, org: OrganizationRow, generation: Generation, viewer: Viewer): Json {
  const full = organizationShape(tree, org, generation, viewer);
  const keys =
    generation === "2.0"
      ? ["id", "name", "systemId", "allowCredentialResets", "children", "panels", "permissions"]
      : ["id", "name", "allowCredentialResets", "children", "panels", "readers", "permissions"];
  const out: Json = {};
  for (const k of keys) if (k in full) out[k] = full[k];
  return out;
}

/** Every organization of a subtree, its root first, then depth first by name. */
export function subtree(tree: OrgTree, id: string): OrganizationRow[] {
  const root = tree.organization(id);
  if (root === undefined) return [];
  const out: OrganizationRow[] = [];
  const walk = (o: OrganizationRow) => {
    out.push(o);
    for (const c of tree.children(o.id).sort(byNameThenId)) walk(c);
  };
  walk(root);
  return out;
}

/** The organizations a grant holds a permission on (`/mine`, T22): those it names, or the root. */
export function mine(tree: OrgTree, grant: Grant, root: OrganizationRow): OrganizationRow[] {
  const orgs = grant.organizations;
  if (orgs === undefined || orgs === null) return [root];
  return [...orgs].flatMap((id) => tree.organization(id) ?? []).sort(byNameThenId);
}

/**
 * Search entities (T23): the organizations and panels of the subtrees of `roots` (each root itself
 * too when `withRoots`) whose name, or a panel's serial number, holds `q` case-insensitively
 * (every one for an empty `q`); by name case-insensitively, then `_id`; each once.
 */
export function searchEntities(
  tree: OrgTree,
  roots: readonly string[],
  q: string,
  generation: Generation,
  withRoots: boolean,
): Json[] {
  const needle = q.toLowerCase();
  const hit = (...texts: (string | null)[]) => texts.some((t) => t !== null && t.toLowerCase().includes(needle));
  const found = new Map<string, Json & { _id: string; name: string }>();
  const add = (e: Json & { _id: string; type: string; name: string }) => found.set(`${e.type}\u0000${e._id}`, e);
  for (const r of roots)
    for (const org of subtree(tree, r)) {
      const system = systemOf(tree, org);
      if ((withRoots || org.id !== r) && hit(org.name))
        add({
          _id: org.id,
          type: "ou",
          name: org.name,
          ...(generation === "2.0" && system !== undefined ? { systemId: system.key } : {}),
        });
      if (system !== undefined)
        for (const n of nodesOf(system))
          if (hit(n.name, n.serialNumber))
            add({
              _id: n.serialNumber ?? n.id,
              type: "panel",
              name: n.name,
              ...(generation === "2.0" ? { uuid: n.id, systemId: system.key } : {}),
            });
      for (const t of panelsOf(tree, org)) {
        const name = panelInfoOf(t).name;
        if (hit(name, t.key)) add({ _id: t.key, type: "panel", name, ...(generation === "2.0" ? { uuid: null } : {}) });
      }
    }
  return [...found.values()].sort((a, b) => byNameThenId({ name: a.name, id: a._id }, { name: b.name, id: b._id }));
}
