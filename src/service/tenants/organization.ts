// The rules of the organization tree (semantics T12–T17), pure: what a child of each kind of
// organization is, the bodies that create and update customers and panels (zod, with the seed's
// defaults), the unique sibling name, and what keeps an organization from being deleted. The
// registry (registry.ts) applies them; the accounts routes answer their refusals.
import { z } from "zod";
import { fromZodIssues, zodMessage } from "../../model/index.js";
import type { Grant } from "../auth/grant.js";
import { HttpError, type HttpIssue, toHttpIssues } from "../httpError.js";
import type { OrganizationRow, OrganizationType, TenantRow } from "../store/registryStore.js";

/** Who asks for a change: the token's grant and where the request came from (events' `clientInfo`). */
export interface Caller {
  readonly grant: Grant;
  readonly clientInfo: { readonly ipAddress: string | null; readonly userAgent: string | null };
}

/** Which interface a request came through: 2.0 `/api/organizations`, 1.0 `/api/ous`. */
export type Generation = "2.0" | "1.0";

/** The flags every organization has (root and dealers too). */
export interface OrganizationFlags {
  readonly useBluetoothCredentials: boolean;
  readonly useTouchMobileApp: boolean;
  readonly allowCredentialResets: boolean;
}

/** The seed's defaults (T12). */
export const DEFAULT_FLAGS: OrganizationFlags = Object.freeze({
  useBluetoothCredentials: true,
  useTouchMobileApp: false,
  allowCredentialResets: true,
});

const FLAG_KEYS = ["useBluetoothCredentials", "useTouchMobileApp", "allowCredentialResets"] as const;

/** An organization's flags as stored in its `fields` (defaults for any missing). */
export function flagsOf(org: OrganizationRow): OrganizationFlags {
  const f = (typeof org.fields === "object" && org.fields !== null ? org.fields : {}) as Record<string, unknown>;
  const out: Record<string, boolean> = {};
  for (const k of FLAG_KEYS) out[k] = typeof f[k] === "boolean" ? (f[k] as boolean) : DEFAULT_FLAGS[k];
  return out as unknown as OrganizationFlags;
}

/** A customer's or panel's name: 1 to 70 characters, not blank. */
const NAME = z
  .string()
  .min(1)
  .max(70)
  .refine((s) => s === "" || s.trim() !== "", { error: "Must not be blank." });

const REPORT_BILLING = ["basic", "standard", "premium"] as const;
export type ReportBillingPolicy = (typeof REPORT_BILLING)[number];

/** A panel's serial number becomes the `S` of host `S.<domain>`: a DNS label (T15). */
export const SERIAL = /^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/;

const customerFields = {
  name: NAME,
  useBluetoothCredentials: z.boolean().optional(),
  useTouchMobileApp: z.boolean().optional(),
  allowCredentialResets: z.boolean().optional(),
};
const SNAPSHOT = z.looseObject({}, { error: "Must be a snapshot (a JSON object)." });
const panelFields = {
  name: NAME,
  allowCredentialResets: z.boolean().optional(),
  credentialResetsPerMonth: z.number().int().min(0).max(1_000_000).optional(),
  reportBillingPolicy: z.enum(REPORT_BILLING).optional(),
};

const SCHEMAS = {
  customerCreate20: z.object({
    ...customerFields,
    type: z.enum(["multi-site", "legacy"]).optional(),
    import: SNAPSHOT.optional(),
  }),
  customerCreate10: z.object({ ...customerFields, import: SNAPSHOT.optional() }),
  customerUpdate: z.object(customerFields),
  panelCreate: z.object({
    ...panelFields,
    id: z.string().regex(SERIAL, {
      error: "Must be a serial number of 1 to 63 letters, digits and hyphens, not starting with a hyphen.",
    }),
    import: SNAPSHOT.optional(),
  }),
  panelUpdate: z.object(panelFields),
};

export type CustomerCreate = z.output<typeof SCHEMAS.customerCreate20>;
export type CustomerUpdate = z.output<typeof SCHEMAS.customerUpdate>;
export type PanelCreate = z.output<typeof SCHEMAS.panelCreate>;
export type PanelUpdate = z.output<typeof SCHEMAS.panelUpdate>;
export type BodyKind = keyof typeof SCHEMAS;

/** The zod schema of a body (the OpenAPI declarations show them). */
export function bodySchema<K extends BodyKind>(kind: K): (typeof SCHEMAS)[K] {
  return SCHEMAS[kind];
}

/**
 * Checks a request body: an object with only the fields of its kind (an unknown one, `type` on an
 * update or a 1.0 create among them, is named), each valid.
 * @throws HttpError 400 with each problem at `body.<field>`.
 */
export function parseBody<K extends BodyKind>(kind: K, body: unknown): z.output<(typeof SCHEMAS)[K]> {
  const schema = SCHEMAS[kind];
  return parseObjectBody(schema, Object.keys(schema.shape), body) as z.output<(typeof SCHEMAS)[K]>;
}

/**
 * A request body checked against `schema`: a JSON object with only the `known` fields (each other
 * one named), each valid. The accounts host's bodies all go through it.
 * @throws HttpError 400 with every problem at `body.<field>`.
 */
export function parseObjectBody<S extends z.ZodType>(schema: S, known: readonly string[], body: unknown): z.output<S> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new HttpError(400, "The request body is invalid.", [{ path: "body", message: "Must be a JSON object." }]);
  const issues: HttpIssue[] = Object.keys(body)
    .filter((k) => !known.includes(k))
    .map((k) => ({ path: `body.${k}`, message: `Unknown field: use ${known.join(", ")}.` }));
  const r = schema.safeParse(body, { error: zodMessage });
  if (!r.success) issues.push(...toHttpIssues(fromZodIssues(r.error.issues, ["body"])));
  if (issues.length > 0) throw new HttpError(400, "The request body is invalid.", issues);
  return r.data as z.output<S>;
}

/** The flags of a new organization: the body's, the defaults for the rest. */
export function newFlags(body: Partial<OrganizationFlags>): OrganizationFlags {
  const out: Record<string, boolean> = {};
  for (const k of FLAG_KEYS) out[k] = body[k] ?? DEFAULT_FLAGS[k];
  return out as unknown as OrganizationFlags;
}

/** The flags after an update: an omitted flag keeps its value (T12). */
export function updatedFlags(current: OrganizationFlags, body: Partial<OrganizationFlags>): OrganizationFlags {
  const out: Record<string, boolean> = {};
  for (const k of FLAG_KEYS) out[k] = body[k] ?? current[k];
  return out as unknown as OrganizationFlags;
}

/**
 * What a new child of `parent` is (T13): depth decides. A child of the root is a dealer (a `type` is
 * refused), a child of a dealer a customer (2.0: `type`, default multi-site; 1.0: legacy), and a
 * customer has no children.
 * @throws HttpError 400 (`type` for a dealer), 409 (a customer's child).
 */
export function childType(parent: OrganizationRow, generation: Generation, type?: string): OrganizationType {
  if (parent.type === "root") {
    if (type !== undefined)
      throw new HttpError(400, "The request body is invalid.", [
        { path: "body.type", message: "A child of the root organization is a dealer: it has no type." },
      ]);
    return "dealer";
  }
  if (parent.type === "dealer") return generation === "1.0" ? "legacy" : type === "legacy" ? "legacy" : "multi-site";
  throw new HttpError(409, "A customer has no children.", [
    { path: "dealer_id", message: `"${parent.id}" is a customer: a customer has no children.` },
  ]);
}

/** The issue of a name a sibling already has, compared case-insensitively (T14), or null. */
export function nameTaken(siblings: readonly OrganizationRow[], name: string, exceptId?: string): HttpIssue | null {
  const lower = name.toLowerCase();
  const other = siblings.find((s) => s.id !== exceptId && s.name.toLowerCase() === lower);
  return other === undefined
    ? null
    : { path: "body.name", message: `Organization "${other.id}" of the same parent already has this name.` };
}

/** What a deletion has to know beyond the organization itself. */
export interface DeleteFacts {
  readonly children: readonly OrganizationRow[];
  readonly tenants: readonly TenantRow[];
  /** Whether its 2.0 system has holders (the tenant host loads it to say). */
  readonly holders: boolean;
}

/**
 * Why an organization cannot be deleted (T16): one issue per child (`children.0`, …), its system's
 * holders (`holders`), one per registered panel (`panels.0`, …), and a migration in progress
 * (`migration`, a staged system). Empty when it can be.
 */
export function deleteConflicts(facts: DeleteFacts): HttpIssue[] {
  const issues: HttpIssue[] = facts.children.map((c, i) => ({
    path: `children.${i}`,
    message: `Has the child organization "${c.id}" (${c.name}): delete it first.`,
  }));
  if (facts.holders) issues.push({ path: "holders", message: "Its system has holders: delete them first." });
  facts.tenants
    .filter((t) => t.kind === "panel" && t.state === "active")
    .forEach((t, i) => {
      issues.push({ path: `panels.${i}`, message: `Has the panel "${t.key}": delete it first.` });
    });
  for (const t of facts.tenants)
    if (t.state === "staged")
      issues.push({ path: "migration", message: `A migration to the system "${t.key}" is in progress.` });
  return issues;
}

/** System ids that would hide a route of the accounts host (`/{system_id}/…` beside `/api/…`). */
export const RESERVED_SYSTEM_IDS: ReadonlySet<string> = new Set([
  "api",
  "oauth2",
  "panels",
  "healthz",
  "openapi.json",
  "docs",
]);

/** The stored fields of a registered panel (its tenant's `info`). */
export interface PanelInfo {
  readonly name: string;
  readonly allowCredentialResets: boolean;
  readonly credentialResetsPerMonth: number;
  readonly reportBillingPolicy: ReportBillingPolicy;
}

/** A panel's stored fields, defaults for any missing (T15). */
export function panelInfoOf(tenant: TenantRow): PanelInfo {
  const i = (typeof tenant.info === "object" && tenant.info !== null ? tenant.info : {}) as Record<string, unknown>;
  return {
    name: typeof i.name === "string" ? i.name : tenant.key,
    allowCredentialResets: typeof i.allowCredentialResets === "boolean" ? i.allowCredentialResets : true,
    credentialResetsPerMonth: typeof i.credentialResetsPerMonth === "number" ? i.credentialResetsPerMonth : 1,
    reportBillingPolicy: REPORT_BILLING.includes(i.reportBillingPolicy as ReportBillingPolicy)
      ? (i.reportBillingPolicy as ReportBillingPolicy)
      : "basic",
  };
}

/** One cloud node of a 2.0 system as its tenant summary keeps it (tenantSummary.ts). */
export interface NodeSummary {
  readonly id: string;
  readonly name: string;
  readonly serialNumber: string | null;
  readonly created: string | null;
  /** Null: the default (I85); a summary written before the field has none. */
  readonly credentialResetsPerMonth: number | null;
}

/** The cloud nodes a system tenant's summary lists (none before the first summary). */
export function nodesOf(tenant: TenantRow): NodeSummary[] {
  const info = tenant.info as { nodes?: unknown } | null;
  const nodes = Array.isArray(info?.nodes) ? (info.nodes as Record<string, unknown>[]) : [];
  return nodes
    .filter((n) => typeof n === "object" && n !== null && typeof n.id === "string")
    .map((n) => ({
      id: n.id as string,
      name: typeof n.name === "string" ? n.name : "",
      serialNumber: typeof n.serialNumber === "string" ? n.serialNumber : null,
      created: typeof n.created === "string" ? n.created : null,
      credentialResetsPerMonth: typeof n.credentialResetsPerMonth === "number" ? n.credentialResetsPerMonth : null,
    }));
}
