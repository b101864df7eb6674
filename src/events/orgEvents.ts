// The organization and panel events of the accounts host (semantics T25–T28), pure: each change of
// an organization emits both its 2.0 `organization.*` and its 1.0 `ou.*` event, a registered
// panel's change a 1.0 `panel.*`, with the seed's body fields. The seed's `id` is the organization's
// (or the panel's), so each body also carries `eventId` (a UUID the outbox dedupes on) and
// `occurredAt`. The webhooks route them by `organization` and its `ancestors`. A permission's events
// (I48) are about the organization the permission is on.
import type { Generation } from "./topics.js";

/** Where the request came from: the socket's address and the `User-Agent` header. */
export interface ClientInfo {
  readonly ipAddress: string | null;
  readonly userAgent: string | null;
}

/** The person behind the token (its tokens-file `user`); every field null for a token without one (T26). */
export interface EventUser {
  readonly firstName: string | null;
  readonly id: string | null;
  readonly lastName: string | null;
}

/** What every event of one change shares. */
export interface EventContext {
  readonly clientInfo: ClientInfo;
  readonly user: EventUser;
  /** When the change was committed (ISO 8601, UTC). */
  readonly occurredAt: string;
  /** A new event id (a UUID). */
  readonly newId: () => string;
}

/** The body of an organization or panel event, as a subscriber receives it (before its secrecy filter). */
export interface OrgEventBody {
  readonly eventId: string;
  readonly occurredAt: string;
  readonly topic: string;
  readonly clientInfo: ClientInfo;
  readonly user: EventUser;
  readonly id: string;
  /** An organization's or panel's name; a permission's events (but `permission.accepted`) have none. */
  readonly name?: string;
  readonly [field: string]: unknown;
}

/** One event and what routes it. */
export interface OrgEvent {
  /** The subscriptions it may reach: 2.0 `/api/organizations/{id}/subscriptions`, 1.0 `/api/ous/{id}/hooks`. */
  readonly generation: Generation;
  /** An organization's event, a registered panel's, or a permission's (on its organization). */
  readonly about: "organization" | "panel" | "permission";
  readonly kind: "created" | "updated" | "deleted" | "accepted";
  /** The organization it is about (a panel's: the panel's organization). */
  readonly organization: string;
  /** That organization's ancestors, root first. */
  readonly ancestors: readonly string[];
  readonly body: OrgEventBody;
}

/** An organization as its events describe it. */
export interface OrgSubject {
  readonly id: string;
  readonly name: string;
  readonly parent: string | null;
  readonly ancestors: readonly string[];
  /** A multi-site customer's system id, else null. */
  readonly systemId: string | null;
  readonly useBluetoothCredentials: boolean;
  readonly useTouchMobileApp: boolean;
}

function common(topic: string, ctx: EventContext) {
  return { eventId: ctx.newId(), occurredAt: ctx.occurredAt, topic, clientInfo: ctx.clientInfo, user: ctx.user };
}

/**
 * The two events of one organization change (T25): `organization.<kind>` (2.0) and `ou.<kind>` (1.0).
 * `given`: on an update, the flags the body gave (the 2.0 body carries only those).
 */
export function organizationEvents(
  kind: "created" | "updated" | "deleted",
  org: OrgSubject,
  ctx: EventContext,
  given: Readonly<Record<string, boolean>> = {},
): [OrgEvent, OrgEvent] {
  const flags = { useBluetoothCredentials: org.useBluetoothCredentials, useTouchMobileApp: org.useTouchMobileApp };
  const v2 = {
    ...common(`organization.${kind}`, ctx),
    id: org.id,
    name: org.name,
    parent: org.parent,
    systemId: org.systemId,
    ...(kind === "updated" ? given : flags),
  };
  const v1 = {
    ...common(`ou.${kind}`, ctx),
    id: org.id,
    name: org.name,
    parent: org.parent,
    ...flags,
    intercoms: [],
    ...(kind === "created" ? {} : { themes: [] }),
  };
  const route = { about: "organization" as const, kind, organization: org.id, ancestors: org.ancestors };
  return [
    { generation: "2.0", ...route, body: v2 },
    { generation: "1.0", ...route, body: v1 },
  ];
}

/** A registered panel as its events describe it. */
export interface PanelSubject {
  readonly serialNumber: string;
  readonly name: string;
  /** Its organization, and that organization's ancestors (root first). */
  readonly ou: string;
  readonly ancestors: readonly string[];
}

/** The event of one registered panel's change (T25): `panel.<kind>` (1.0). */
export function panelEvent(kind: "created" | "updated" | "deleted", panel: PanelSubject, ctx: EventContext): OrgEvent {
  return {
    generation: "1.0",
    about: "panel",
    kind,
    organization: panel.ou,
    ancestors: panel.ancestors,
    body: { ...common(`panel.${kind}`, ctx), id: panel.serialNumber, name: panel.name, ou: panel.ou },
  };
}

/** A permission as its events describe it (I48). */
export interface PermissionSubject {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly role: string;
  readonly userId: string | null;
  /** The organization the permission is on, and that organization's ancestors (root first). */
  readonly ou: string;
  readonly ancestors: readonly string[];
  /** The organization's 2.0 system id (a multi-site customer's), else null. */
  readonly systemId: string | null;
}

/**
 * The events of one permission change (I48): `permission.<kind>` (2.0), and `permission.accepted` for
 * 1.0 subscriptions too. The body's `id` is the permission's. They reach, as a panel's do, the
 * permission's organization's own subscriptions (either scope) and its ancestors' recursive ones.
 */
export function permissionEvents(
  kind: "created" | "updated" | "deleted" | "accepted",
  p: PermissionSubject,
  ctx: EventContext,
): OrgEvent[] {
  const route = {
    about: "permission" as const,
    kind,
    organization: p.ou,
    ancestors: p.ancestors,
  };
  const fields = (topic: string) => ({
    ...common(topic, ctx),
    id: p.id,
    email: p.email,
    ...(kind === "accepted" ? { name: p.name } : {}),
    ou: p.ou,
    role: p.role,
    systemId: p.systemId,
    userId: p.userId,
  });
  const events: OrgEvent[] = [{ generation: "2.0", ...route, body: fields(`permission.${kind}`) }];
  if (kind === "accepted") events.push({ generation: "1.0", ...route, body: fields("permission.accepted") });
  return events;
}
