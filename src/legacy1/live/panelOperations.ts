// The 1.0 panel API write routes of a 1.0 panel (relative to `{panel_url}`), plus this project's additions to the API
// (credentials and their activation, rules, `PUT /api/config`). Ids are integers: a create
// takes the next integer never given in its collection (docs/semantics.md LP1). Each handler checks the
// body's required fields and shape and edits the draft panel; every cross-entity rule (names,
// references, ports, limits) is checked once, on the whole resulting panel, by parsePanel.
import type { Draft } from "immer";
import { z } from "zod";
import { type Issue, credentialSchema, withConnectionDefaults } from "../../model/index.js";
import { type PanelSnapshot, panelSnapshotSchema } from "../panelSchema.js";
import {
  configureNetwork,
  connectionFields,
  objectBody,
  parseBody,
  pick,
  reportBody,
  requireKeys,
} from "../../live/body.js";
import { Refusal, refuse } from "../../live/operation.js";
import { attributeIssues, parseDefinition, valuesAgainst } from "./customFields.js";
import { onlyKeys } from "../../live/operations/common.js";

export type PanelDraft = Draft<PanelSnapshot>;
type Json = Record<string, unknown>;

export interface PanelWriteContext {
  readonly draft: PanelDraft;
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** What a handler did: its status, the id it created, and the panel path of the entity the body became. */
export interface PanelWritten {
  readonly status: 200 | 204;
  readonly id?: number | string;
  /** Problems the whole-panel check finds under this path are the body's: reported as `body.…`. */
  readonly at?: readonly (string | number)[];
}

const shape = panelSnapshotSchema.shape;
const personSchema = shape.persons.unwrap().element;
const groupSchema = shape.groups.unwrap().element;
const connectionSchema = shape.connections.unwrap().element;
const deviceSchema = shape.devices.unwrap().element;
const floorGroupSchema = shape.floorGroups.unwrap().element;
const attributeSchema = shape.attributes.unwrap().element;
const ruleSchema = shape.rules.unwrap().element;
const configSchema = shape.config.unwrap();

const integerId = z.number().int().min(0);
const integerIds = z.array(integerId);

/** A path id as the integer it names, or a 404: `/api/persons/abc` names no person. */
function idParam(params: Readonly<Record<string, string>>, key: string, what: string): number {
  const raw = params[key]!;
  if (!/^\d{1,15}$/.test(raw)) refuse(404, "notFound", [], `No ${what} has id "${raw}" (1.0 ids are integers).`);
  return Number(raw);
}

function indexOfId(list: readonly { readonly id: number | string }[], id: number | string, what: string): number {
  const i = list.findIndex((x) => x.id === id);
  if (i < 0) refuse(404, "notFound", [], `No ${what} has id "${id}".`);
  return i;
}

/** The kinds of entity whose ids a 1.0 create draws (credential ids count across all persons). */
export type IdKind = "persons" | "credentials" | "groups" | "connections" | "devices" | "floorGroups" | "rules";

/** The next free integer of a collection: one more than the largest id in use, 1 when there is none. */
export function nextId(ids: Iterable<number>): number {
  let max = 0;
  for (const id of ids) if (id > max) max = id;
  return max + 1;
}

/**
 * The id a create of `kind` takes, recorded as the panel's `lastIds` of that kind (LP1): one more
 * than both the largest id in use and the largest given or deleted before (deletes record theirs,
 * retireId), so a deleted entity's id never names another one (an integration that saw it removed
 * would take the new one for the old).
 */
function drawId(draft: PanelDraft, kind: IdKind, inUse: Iterable<number>): number {
  const id = Math.max(nextId(inUse), (draft.lastIds?.[kind] ?? 0) + 1);
  draft.lastIds ??= {};
  draft.lastIds[kind] = id;
  return id;
}

/** A deleted entity's id stays given (LP1): `lastIds` of its kind becomes at least `id`. */
function retireId(draft: PanelDraft, kind: IdKind, id: number): void {
  if ((draft.lastIds?.[kind] ?? 0) >= id) return;
  draft.lastIds ??= {};
  draft.lastIds[kind] = id;
}

const NO_CONTENT: PanelWritten = { status: 204 };

function conflict(issues: Issue[]): void {
  if (issues.length > 0) throw new Refusal(409, issues);
}

// ── People ────────────────────────────────────────────────────────────────────────────────────

const PERSON_CREATE = [
  "firstName",
  "lastName",
  "email",
  "partition",
  "enabled",
  "activeDate",
  "expireDate",
  "pin",
  "duressPin",
  "customAttributes",
  "metadata",
];
const PERSON_UPDATE_REQUIRED = [
  "firstName",
  "lastName",
  "partition",
  "enabled",
  "activeDate",
  "expireDate",
  "pin",
  "duressPin",
];
const PERSON_UPDATE = [...PERSON_UPDATE_REQUIRED, "email", "customAttributes", "metadata"];
/** Where a person write puts what its body may not carry (HS5). */
const PERSON_HINTS: Readonly<Record<string, string>> = {
  groups: "A person write does not change memberships: use the group membership routes.",
  credentials: "A person write does not change credentials: use the routes under /api/persons/{person_id}/credentials.",
  id: "A person's id is drawn by the panel and never changes.",
};

function personIndex(ctx: PanelWriteContext): number {
  return indexOfId(ctx.draft.persons, idParam(ctx.params, "personId", "person"), "person");
}

/** The person's custom field values against its partition's definitions (docs/semantics.md S16), as a 400 at the body. */
function checkAttributes(draft: PanelDraft, person: { partition: number; customAttributes: Json | null }): void {
  const defs = draft.attributes.filter((a) => a.partition === person.partition) as Json[];
  reportBody(attributeIssues(person.customAttributes, defs, ["body", "customAttributes"]));
}

export function createPerson({ draft, body }: PanelWriteContext): PanelWritten {
  const b = objectBody(body);
  onlyKeys(b, PERSON_CREATE, PERSON_HINTS);
  requireKeys(b, ["firstName", "lastName"]);
  const id = drawId(
    draft,
    "persons",
    draft.persons.map((p) => p.id),
  );
  const person = parseBody(personSchema, { enabled: true, ...pick(b, PERSON_CREATE), id, groups: [], credentials: [] });
  checkAttributes(draft, person);
  draft.persons.push(person);
  return { status: 200, id, at: ["persons", draft.persons.length - 1] };
}

export function updatePerson(ctx: PanelWriteContext): PanelWritten {
  const i = personIndex(ctx);
  const b = objectBody(ctx.body);
  onlyKeys(b, PERSON_UPDATE, PERSON_HINTS);
  requireKeys(b, PERSON_UPDATE_REQUIRED);
  const current = ctx.draft.persons[i]!;
  const next = parseBody(personSchema, { ...current, ...pick(b, PERSON_UPDATE) });
  // Values are checked when the body writes them or moves the person to another partition (LP10).
  if (Object.hasOwn(b, "customAttributes") || next.partition !== current.partition) checkAttributes(ctx.draft, next);
  // L2: optional fields the body leaves out keep their value (and no `undefined` key appears).
  for (const k of PERSON_UPDATE) if (Object.hasOwn(b, k)) (current as Json)[k] = (next as Json)[k];
  return { status: 204, at: ["persons", i] };
}

export function deletePerson(ctx: PanelWriteContext): PanelWritten {
  // The person's credentials and memberships live on the person and go with it.
  const i = personIndex(ctx);
  const p = ctx.draft.persons[i]!;
  retireId(ctx.draft, "persons", p.id);
  for (const c of p.credentials) retireId(ctx.draft, "credentials", c.id);
  ctx.draft.persons.splice(i, 1);
  return NO_CONTENT;
}

/** The 1.0 panel API "Update photo": `base64`, the photo as a data URL, becomes the person's photoUrl. */
export function updatePhoto(ctx: PanelWriteContext): PanelWritten {
  const i = personIndex(ctx);
  const b = objectBody(ctx.body);
  requireKeys(b, ["base64"]);
  const url = parseBody(
    z.string().regex(/^data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/]+=*$/, {
      error: "Must be an image as a base64 data URL (data:image/…;base64,…).",
    }),
    b.base64,
    ["body", "base64"],
  );
  ctx.draft.persons[i]!.photoUrl = url;
  return NO_CONTENT;
}

// ── Credentials, an addition to the API (the 1.0 panel API does not show them; the 2.0 systems API routes under /api/persons) ─────────

const DIGITAL_TYPES = z.array(z.enum(["touch", "token"])).min(1, { error: "Must name at least one credential type." });

function allCredentialIds(draft: PanelDraft): number[] {
  return draft.persons.flatMap((p) => p.credentials.map((c) => c.id));
}

export function createCredential(ctx: PanelWriteContext): PanelWritten {
  const i = personIndex(ctx);
  const person = ctx.draft.persons[i]!;
  const b = objectBody(ctx.body);
  requireKeys(b, ["types"]);
  const card = Array.isArray(b.types) && b.types.includes("card");
  const issues: Issue[] = [];
  if (card && !Object.hasOwn(b, "credentialNumber"))
    issues.push({
      code: "required",
      path: ["body", "credentialNumber"],
      message: "A card credential needs a credentialNumber.",
    });
  if (!card)
    for (const k of ["credentialNumber", "facilityCode", "description"])
      if (Object.hasOwn(b, k) && b[k] !== null)
        issues.push({
          code: "invalid",
          path: ["body", k],
          message: `Only card credentials carry a ${k}; a digital credential gets its number when it is activated.`,
        });
  reportBody(issues);
  const id = drawId(ctx.draft, "credentials", allCredentialIds(ctx.draft));
  const c = parseBody(credentialSchema, {
    id: String(id),
    types: b.types,
    credentialNumber: card ? b.credentialNumber : null,
    facilityCode: card ? (b.facilityCode ?? null) : null,
    description: card ? (b.description ?? null) : "Pending",
  });
  person.credentials.push({
    id,
    personId: person.id,
    credentialNumber: c.credentialNumber,
    facilityCode: c.facilityCode,
    description: c.description,
    types: c.types,
  });
  return { status: 200, id, at: ["persons", i, "credentials", person.credentials.length - 1] };
}

function credentialAt(ctx: PanelWriteContext): { person: PanelDraft["persons"][number]; j: number } {
  const person = ctx.draft.persons[personIndex(ctx)]!;
  const j = indexOfId(
    person.credentials,
    idParam(ctx.params, "credentialId", "credential"),
    "credential of this person",
  );
  return { person, j };
}

export function updateCredential(ctx: PanelWriteContext): PanelWritten {
  const { person, j } = credentialAt(ctx);
  const c = person.credentials[j]! as Json;
  const b = objectBody(ctx.body);
  requireKeys(b, ["types"]);
  if ((c.types as string[]).includes("card"))
    refuse(400, "invalid", ["body", "types"], "Only the types of a digital credential can change after creation.");
  c.types = parseBody(DIGITAL_TYPES, b.types, ["body", "types"]);
  return NO_CONTENT;
}

export function deleteCredential(ctx: PanelWriteContext): PanelWritten {
  const { person, j } = credentialAt(ctx);
  retireId(ctx.draft, "credentials", person.credentials[j]!.id);
  person.credentials.splice(j, 1);
  return NO_CONTENT;
}

const activation = z.object({
  credentialNumber: credentialSchema.shape.credentialNumber.unwrap().unwrap(),
  description: z.string().min(1).max(255),
});

/** The 1.0 panel API: a pending digital credential gets its number and the activating device's model name. */
export function activateCredential(ctx: PanelWriteContext): PanelWritten {
  const { person, j } = credentialAt(ctx);
  const c = person.credentials[j]! as Json;
  if ((c.types as string[]).includes("card"))
    refuse(409, "conflict", [], "Card credentials are not activated; only pending digital credentials are.");
  if (c.credentialNumber !== null && c.credentialNumber !== undefined)
    refuse(409, "conflict", [], `Credential "${String(c.id)}" is already active.`);
  const a = parseBody(activation, objectBody(ctx.body));
  c.credentialNumber = a.credentialNumber;
  c.description = a.description;
  return { status: 204, at: ["persons", ctx.draft.persons.indexOf(person), "credentials", j] };
}

// ── Groups and memberships ────────────────────────────────────────────────────────────────────

function groupIndex(ctx: PanelWriteContext): number {
  return indexOfId(ctx.draft.groups, idParam(ctx.params, "groupId", "group"), "group");
}

export function createGroup({ draft, body }: PanelWriteContext): PanelWritten {
  const b = objectBody(body);
  requireKeys(b, ["name"]);
  const id = drawId(
    draft,
    "groups",
    draft.groups.map((g) => g.id),
  );
  draft.groups.push(parseBody(groupSchema, { ...pick(b, ["name", "partition", "metadata"]), id }));
  return { status: 200, id, at: ["groups", draft.groups.length - 1] };
}

export function updateGroup(ctx: PanelWriteContext): PanelWritten {
  const i = groupIndex(ctx);
  const b = objectBody(ctx.body);
  requireKeys(b, ["name", "partition"]);
  const current = ctx.draft.groups[i]!;
  ctx.draft.groups[i] = parseBody(groupSchema, {
    ...pick(b, ["name", "partition"]),
    metadata: Object.hasOwn(b, "metadata") ? b.metadata : current.metadata,
    id: current.id,
  });
  return { status: 204, at: ["groups", i] };
}

export function deleteGroup(ctx: PanelWriteContext): PanelWritten {
  const i = groupIndex(ctx);
  const id = ctx.draft.groups[i]!.id;
  conflict(
    ctx.draft.rules.flatMap((r, k) =>
      r.groupId === id
        ? [{ code: "conflict", path: ["rules", k, "groupId"], message: `Rule ${r.id} is a rule of group ${id}.` }]
        : [],
    ),
  );
  for (const p of ctx.draft.persons) {
    const j = p.groups.indexOf(id);
    if (j >= 0) p.groups.splice(j, 1);
  }
  retireId(ctx.draft, "groups", id);
  ctx.draft.groups.splice(i, 1);
  return NO_CONTENT;
}

/**
 * A list of integer ids of existing entities; an id that names nothing is 400 `unknownReference` at
 * `body.<key>.<k>`, as every unknown reference of a body is on 2.0 too (semantics LP7, L22).
 */
function idList(b: Json, key: string, known: ReadonlySet<number>, what: string): number[] {
  requireKeys(b, [key]);
  if (!Object.hasOwn(b, key)) throw new Refusal(400, []);
  const ids = parseBody(integerIds, b[key], ["body", key]);
  const issues: Issue[] = [];
  ids.forEach((id, k) => {
    if (!known.has(id))
      issues.push({
        code: "unknownReference",
        path: ["body", key, k],
        message: `Names ${what} ${id}, which does not exist.`,
      });
  });
  if (issues.length > 0) throw new Refusal(400, issues);
  return [...new Set(ids)];
}

/** The 1.0 panel API: `persons` defines all members of the group, existing ones included. */
export function replaceGroupPersons(ctx: PanelWriteContext): PanelWritten {
  const id = ctx.draft.groups[groupIndex(ctx)]!.id;
  const members = new Set(
    idList(objectBody(ctx.body), "persons", new Set(ctx.draft.persons.map((p) => p.id)), "person"),
  );
  for (const p of ctx.draft.persons) {
    const j = p.groups.indexOf(id);
    if (j >= 0 && !members.has(p.id)) p.groups.splice(j, 1);
    if (j < 0 && members.has(p.id)) p.groups.push(id);
  }
  return NO_CONTENT;
}

/** The 1.0 panel API: `groups` defines all the person's groups. */
export function replacePersonGroups(ctx: PanelWriteContext): PanelWritten {
  const p = ctx.draft.persons[personIndex(ctx)]!;
  const groups = idList(objectBody(ctx.body), "groups", new Set(ctx.draft.groups.map((g) => g.id)), "group");
  if (groups.length !== p.groups.length || groups.some((g, k) => p.groups[k] !== g)) p.groups = groups;
  return NO_CONTENT;
}

export function removeMembership(ctx: PanelWriteContext): PanelWritten {
  const p = ctx.draft.persons[personIndex(ctx)]!;
  const id = ctx.draft.groups[groupIndex(ctx)]!.id;
  const j = p.groups.indexOf(id);
  if (j < 0) refuse(404, "notFound", [], `Person ${p.id} is not a member of group ${id}.`);
  p.groups.splice(j, 1);
  return NO_CONTENT;
}

// ── Connections ───────────────────────────────────────────────────────────────────────────────

/** A connection body (the 1.0 panel API: "body as Document 2 connection body"): the 2.0 rules, checked on the whole panel. */
function connectionBody(b: Json, id: number, keep: Json): Json {
  return parseBody(connectionSchema, { ...keep, ...connectionFields(b), id });
}

function connectionIndex(ctx: PanelWriteContext): number {
  return indexOfId(ctx.draft.connections, idParam(ctx.params, "connectionId", "connection"), "connection");
}

export function createConnection({ draft, body }: PanelWriteContext): PanelWritten {
  const id = drawId(
    draft,
    "connections",
    draft.connections.map((c) => c.id),
  );
  draft.connections.push(connectionBody(objectBody(body), id, {}) as PanelDraft["connections"][number]);
  return { status: 200, id, at: ["connections", draft.connections.length - 1] };
}

export function updateConnection(ctx: PanelWriteContext): PanelWritten {
  const i = connectionIndex(ctx);
  const c = ctx.draft.connections[i]! as Json;
  // The network settings stored by "configure" and the live `connected` flag are not part of the body.
  const keep = pick(c, ["connected", "dhcp", "netmask", "gateway", "dns"]);
  ctx.draft.connections[i] = connectionBody(
    objectBody(ctx.body),
    c.id as number,
    keep,
  ) as PanelDraft["connections"][number];
  return { status: 204, at: ["connections", i] };
}

export function deleteConnection(ctx: PanelWriteContext): PanelWritten {
  const i = connectionIndex(ctx);
  const id = ctx.draft.connections[i]!.id;
  conflict(
    ctx.draft.devices.flatMap((d, k) =>
      d.connection === id
        ? [
            {
              code: "conflict",
              path: ["devices", k, "connection"],
              message: `Device ${d.id} sits on connection ${id}.`,
            },
          ]
        : [],
    ),
  );
  retireId(ctx.draft, "connections", id);
  ctx.draft.connections.splice(i, 1);
  return NO_CONTENT;
}

/** The 1.0 panel API "Configure network": applies only when `manufacturer` is VENDOR_A; refused (409) otherwise. */
export function configureConnection(ctx: PanelWriteContext): PanelWritten {
  const c = ctx.draft.connections[connectionIndex(ctx)]! as Json;
  configureNetwork(c, withConnectionDefaults(c).manufacturer, String(c.id), ctx.body);
  return NO_CONTENT;
}

// ── Devices ───────────────────────────────────────────────────────────────────────────────────

const DEVICE_WRITABLE = [
  "name",
  "type",
  "publicIcon",
  "connection",
  "port",
  "primaryReader",
  "partition",
  "inputTypes",
  "osdpAddress",
  "wirelessAddress",
  "readerType",
  "readerSerialNumber",
  "supportBleCredentials",
  "securedReadsOnly",
  "delay",
  "dwell",
  "dps",
  "propAlarm",
  "propDelay",
  "rex",
  "forcedAlarm",
  "autoOpenAfterFirstAllow",
  "authenticationPolicy",
  "metadata",
];
const DEVICE_UPDATE_REQUIRED = [
  "name",
  "connection",
  "port",
  "type",
  "publicIcon",
  "delay",
  "dwell",
  "dps",
  "rex",
  "autoOpenAfterFirstAllow",
  "authenticationPolicy",
];

function deviceIndex(ctx: PanelWriteContext): number {
  return indexOfId(ctx.draft.devices, idParam(ctx.params, "deviceId", "device"), "device");
}

export function createDevice({ draft, body }: PanelWriteContext): PanelWritten {
  const b = objectBody(body);
  requireKeys(b, ["name", "connection", "port"]);
  const id = drawId(
    draft,
    "devices",
    draft.devices.map((d) => d.id),
  );
  draft.devices.push(parseBody(deviceSchema, { ...pick(b, DEVICE_WRITABLE), id }));
  return { status: 200, id, at: ["devices", draft.devices.length - 1] };
}

export function updateDevice(ctx: PanelWriteContext): PanelWritten {
  const i = deviceIndex(ctx);
  const b = objectBody(ctx.body);
  requireKeys(b, DEVICE_UPDATE_REQUIRED);
  const current = ctx.draft.devices[i]! as Json;
  // L1: the body replaces the writable fields (an omitted optional one takes its create default);
  // what the body leaves out of `partition` and `metadata`, and what it cannot write, is kept.
  const kept = pick(current, [
    "created",
    "bootloaderVersion",
    "startupVersion",
    "hardwareVersion",
    "serialNumber",
    "firmwareVersion",
    "partition",
    "metadata",
  ]);
  ctx.draft.devices[i] = parseBody(deviceSchema, { ...kept, ...pick(b, DEVICE_WRITABLE), id: current.id });
  return { status: 204, at: ["devices", i] };
}

export function deleteDevice(ctx: PanelWriteContext): PanelWritten {
  const i = deviceIndex(ctx);
  const s = ctx.draft;
  const id = s.devices[i]!.id;
  const issues: Issue[] = [];
  s.rules.forEach((r, k) => {
    const j = r.devices.indexOf(id);
    if (j >= 0)
      issues.push({ code: "conflict", path: ["rules", k, "devices", j], message: `Rule ${r.id} opens device ${id}.` });
  });
  s.floorGroups.forEach((f, k) => {
    if (f.readerPort === id)
      issues.push({
        code: "conflict",
        path: ["floorGroups", k, "readerPort"],
        message: `Floor group ${f.id} uses device ${id} as its reader.`,
      });
    const j = f.floors.indexOf(id);
    if (j >= 0)
      issues.push({
        code: "conflict",
        path: ["floorGroups", k, "floors", j],
        message: `Floor group ${f.id} opens floor ${id}.`,
      });
  });
  s.devices.forEach((d, k) => {
    if (d.primaryReader === id)
      issues.push({
        code: "conflict",
        path: ["devices", k, "primaryReader"],
        message: `Device ${d.id} is an additional reader of device ${id}.`,
      });
  });
  conflict(issues);
  retireId(s, "devices", id);
  s.devices.splice(i, 1);
  return NO_CONTENT;
}

// ── Custom fields (attributes), under /api/partitions/{partition_id}/attributes ───────────────

function partitionParam(ctx: PanelWriteContext): number {
  return idParam(ctx.params, "partitionId", "partition");
}

function attributeIndex(ctx: PanelWriteContext, partition: number): number {
  const id = ctx.params.attributeId!;
  const i = ctx.draft.attributes.findIndex((a) => a.id === id && a.partition === partition);
  if (i < 0) refuse(404, "notFound", [], `No custom field of partition ${partition} has id "${id}".`);
  return i;
}

/** A definition of partition `partition` from a body: the 1.0 panel API has no `description` (nor a regex description). */
function definition(
  b: Json,
  partition: number,
  id: unknown,
  prefix: (string | number)[],
): PanelDraft["attributes"][number] {
  const issues: Issue[] = [];
  for (const k of ["description", "regexDescription"])
    if (Object.hasOwn(b, k))
      issues.push({ code: "invalid", path: [...prefix, k], message: `1.0 custom fields have no ${k}.` });
  reportBody(issues);
  const { partition: _ignored, description: _d, regexDescription: _r, ...rest } = b;
  const checked = parseDefinition({ ...rest, id }, prefix);
  return parseBody(attributeSchema, { ...checked, partition }, prefix);
}

/** 409 naming each person whose value the new definitions no longer fit (LP10). */
function refuseUnfitValues(
  draft: PanelDraft,
  partition: number,
  defs: readonly PanelDraft["attributes"][number][],
): void {
  conflict(valuesAgainst(draft.persons, partition, defs as readonly Json[]));
}

/** Values of custom fields that no longer exist go with their definition (a dropped column). */
function dropValues(
  draft: PanelDraft,
  partition: number,
  keep: ReadonlySet<string>,
  removed: ReadonlySet<string>,
): void {
  for (const p of draft.persons) {
    if (p.partition !== partition || p.customAttributes === null) continue;
    for (const k of Object.keys(p.customAttributes)) if (removed.has(k) && !keep.has(k)) delete p.customAttributes[k];
  }
}

export function createAttribute(ctx: PanelWriteContext): PanelWritten {
  const partition = partitionParam(ctx);
  const b = objectBody(ctx.body);
  requireKeys(b, ["id", "type"]);
  if (typeof b.id === "string" && ctx.draft.attributes.some((a) => a.id === b.id && a.partition === partition))
    refuse(409, "duplicateId", ["body", "id"], `Partition ${partition} already has a custom field "${b.id}".`);
  const def = definition(b, partition, b.id, ["body"]);
  refuseUnfitValues(ctx.draft, partition, [def]);
  ctx.draft.attributes.push(def);
  return { status: 200, id: b.id as string, at: ["attributes", ctx.draft.attributes.length - 1] };
}

export function updateAttribute(ctx: PanelWriteContext): PanelWritten {
  const partition = partitionParam(ctx);
  const i = attributeIndex(ctx, partition);
  const b = objectBody(ctx.body);
  requireKeys(b, ["type"]);
  const def = definition(b, partition, ctx.draft.attributes[i]!.id, ["body"]);
  refuseUnfitValues(ctx.draft, partition, [def]);
  ctx.draft.attributes[i] = def;
  return { status: 204, at: ["attributes", i] };
}

export function deleteAttribute(ctx: PanelWriteContext): PanelWritten {
  const partition = partitionParam(ctx);
  const i = attributeIndex(ctx, partition);
  const id = ctx.draft.attributes[i]!.id;
  ctx.draft.attributes.splice(i, 1);
  dropValues(ctx.draft, partition, new Set(), new Set([id]));
  return NO_CONTENT;
}

/** The 1.0 panel API "Replace all": the body array becomes the partition's definitions. */
export function replaceAttributes(ctx: PanelWriteContext): PanelWritten {
  const partition = partitionParam(ctx);
  if (!Array.isArray(ctx.body)) refuse(400, "invalidType", ["body"], "Must be an array of custom field definitions.");
  const read = (ctx.body as unknown[]).map((d, k) => {
    const b = objectBody(d);
    const missing: Issue[] = ["id", "type"]
      .filter((f) => !Object.hasOwn(b, f))
      .map((f) => ({ code: "required", path: ["body", k, f], message: "Is required." }));
    if (missing.length > 0) {
      reportBody(missing);
      return null;
    }
    // Each definition's problems are collected (HS6): a later definition is checked too.
    try {
      return definition(b, partition, b.id, ["body", k]);
    } catch (e) {
      if (!(e instanceof Refusal) || e.status !== 400) throw e;
      reportBody(e.issues);
      return null;
    }
  });
  const defs = read.filter((d) => d !== null);
  if (defs.length < read.length) throw new Refusal(400, []);
  const seen = new Set<string>();
  defs.forEach((d, k) => {
    if (seen.has(d.id)) refuse(409, "duplicateId", ["body", k, "id"], `Custom field "${d.id}" is defined twice.`);
    seen.add(d.id);
  });
  refuseUnfitValues(ctx.draft, partition, defs);
  const before = ctx.draft.attributes.filter((a) => a.partition === partition).map((a) => a.id);
  ctx.draft.attributes = [...ctx.draft.attributes.filter((a) => a.partition !== partition), ...defs];
  dropValues(ctx.draft, partition, seen, new Set(before));
  return NO_CONTENT;
}

// ── Floor groups ──────────────────────────────────────────────────────────────────────────────

function floorGroupIndex(ctx: PanelWriteContext): number {
  return indexOfId(ctx.draft.floorGroups, idParam(ctx.params, "floorGroupId", "floor group"), "floor group");
}

function floorGroupBody(b: Json, id: number, partition: number): PanelDraft["floorGroups"][number] {
  requireKeys(b, ["name", "readerPort", "floors"]);
  const issues: Issue[] = [];
  if (!integerId.safeParse(b.readerPort).success)
    issues.push({
      code: "invalidType",
      path: ["body", "readerPort"],
      message: "Must be the integer id of an elevator reader.",
    });
  if (!integerIds.safeParse(b.floors).success)
    issues.push({
      code: "invalidType",
      path: ["body", "floors"],
      message: "Must be an array of integer ids of floor relays.",
    });
  reportBody(issues);
  return parseBody(floorGroupSchema, { partition, ...pick(b, ["name", "partition", "readerPort", "floors"]), id });
}

export function createFloorGroup({ draft, body }: PanelWriteContext): PanelWritten {
  const id = drawId(
    draft,
    "floorGroups",
    draft.floorGroups.map((f) => f.id),
  );
  draft.floorGroups.push(floorGroupBody(objectBody(body), id, 0));
  return { status: 200, id, at: ["floorGroups", draft.floorGroups.length - 1] };
}

export function updateFloorGroup(ctx: PanelWriteContext): PanelWritten {
  const i = floorGroupIndex(ctx);
  const current = ctx.draft.floorGroups[i]!;
  // L1: "same body" as create; a body without `partition` puts the floor group in partition 0.
  ctx.draft.floorGroups[i] = floorGroupBody(objectBody(ctx.body), current.id, 0);
  return { status: 204, at: ["floorGroups", i] };
}

export function deleteFloorGroup(ctx: PanelWriteContext): PanelWritten {
  const i = floorGroupIndex(ctx);
  const id = ctx.draft.floorGroups[i]!.id;
  const issues: Issue[] = [];
  ctx.draft.rules.forEach((r, k) => {
    const j = r.floorGroups.indexOf(id);
    if (j >= 0)
      issues.push({
        code: "conflict",
        path: ["rules", k, "floorGroups", j],
        message: `Elevator rule ${r.id} opens floor group ${id}.`,
      });
  });
  conflict(issues);
  retireId(ctx.draft, "floorGroups", id);
  ctx.draft.floorGroups.splice(i, 1);
  return NO_CONTENT;
}

// ── Rules, an addition to the API (the body is the panel rule without `id`: integer references, HH:mm times) ─────────

function ruleIndex(ctx: PanelWriteContext): number {
  return indexOfId(ctx.draft.rules, idParam(ctx.params, "ruleId", "rule"), "rule");
}

function ruleBody(body: unknown, id: number): PanelDraft["rules"][number] {
  const { id: _ignored, ...b } = objectBody(body);
  requireKeys(b, ["groupId", "startTime", "stopTime"]);
  return parseBody(ruleSchema, { ...b, id });
}

export function createRule({ draft, body }: PanelWriteContext): PanelWritten {
  const id = drawId(
    draft,
    "rules",
    draft.rules.map((r) => r.id),
  );
  draft.rules.push(ruleBody(body, id));
  return { status: 200, id, at: ["rules", draft.rules.length - 1] };
}

export function updateRule(ctx: PanelWriteContext): PanelWritten {
  const i = ruleIndex(ctx);
  ctx.draft.rules[i] = ruleBody(ctx.body, ctx.draft.rules[i]!.id);
  return { status: 204, at: ["rules", i] };
}

export function deleteRule(ctx: PanelWriteContext): PanelWritten {
  const i = ruleIndex(ctx);
  retireId(ctx.draft, "rules", ctx.draft.rules[i]!.id);
  ctx.draft.rules.splice(i, 1);
  return NO_CONTENT;
}

// ── Configuration ─────────────────────────────────────────────────────────────────────────────

const CONFIG_WRITABLE = ["timezone", "logPurgeDays", "cardFormat", "locale", "offlinePolicy", "killTimer"];

/** The 1.0 panel API "Update configuration": the fields given change, the others stay (docs/semantics.md L). */
export function updateConfig({ draft, body }: PanelWriteContext): PanelWritten {
  const b = objectBody(body);
  const unknown = Object.keys(b).filter((k) => !CONFIG_WRITABLE.includes(k));
  if (unknown.length > 0)
    throw new Refusal(
      400,
      unknown.map((k) => ({
        code: "unknownField",
        path: ["body", k],
        message: `Is not a configuration field (${CONFIG_WRITABLE.join(", ")}).`,
      })),
    );
  draft.config = parseBody(configSchema, { ...draft.config, ...b });
  return { status: 204, at: ["config"] };
}
