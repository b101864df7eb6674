// The 1.0 panel API read routes of a 1.0 panel over its current snapshot: retrieve, lists with
// paging (the accounts API), members of a group, groups of a person, search, info, configuration, RSOP.
// The software version, as `rsop --version` prints it: the bundler inlines this one field of package.json.
import { version as SOFTWARE_VERSION } from "../../../package.json";
import type { PanelEngine } from "../panelEngine.js";
import { type Issue, QueryError } from "../../model/index.js";
import type { PanelSnapshot } from "../panelSchema.js";
import { panelKey } from "../parsePanel.js";
import { Refusal, refuse } from "../../live/operation.js";
import { connectionAnswer } from "../../live/operations/reads.js";
import { pageOf } from "../../live/routeTable.js";
import { PAGING, withQueryKeys } from "../../live/queryKeys.js";

export interface PanelReadContext {
  readonly panel: PanelSnapshot;
  readonly engine: PanelEngine;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The live system's clock: the RSOP instant when the query gives no `at`. */
  readonly now: () => number;
}

export interface PanelAnswer {
  readonly body: unknown;
  readonly total?: number;
}

type Json = Record<string, unknown>;
type Person = PanelSnapshot["persons"][number];

const badPage = (key: string, min: number, max: number): never =>
  refuse(400, "invalid", ["query", key], `Must be a whole number from ${min} to ${max}.`);

/** One page of `items` in id order, with the total before paging (page 0-based, default 0; per_page default 10, max 100). */
function paged<T extends { id: number | string }>(
  items: readonly T[],
  query: URLSearchParams,
  map: (x: T) => unknown = (x) => x,
): PanelAnswer {
  return pageOf(items, query, map, badPage);
}

function idParam(params: Readonly<Record<string, string>>, key: string): number {
  const raw = params[key]!;
  return /^\d{1,15}$/.test(raw) ? Number(raw) : -1;
}

function find<T extends { id: number | string }>(
  list: readonly T[],
  id: number | string,
  what: string,
  raw: string,
): T {
  return list.find((x) => x.id === id) ?? refuse(404, "notFound", [], `No ${what} has id "${raw}".`);
}

/**
 * A credential as the 1.0 person table lists it, `{id, personId, credentialNumber, facilityCode, description,
 * types}`: what the panel does not hold is null (LP13).
 */
function credentialBody(c: Person["credentials"][number], personId: number): unknown {
  // Object.assign keeps the table's key order: the stored values replace the defaults in place.
  return Object.assign({ id: c.id, personId, credentialNumber: null, facilityCode: null, description: null }, c);
}

/**
 * The 1.0 panel API person, every field of its table in the table's order, what the panel does not hold
 * answered with its default (`enabled` true, else null; LP13); groups as `{id, name, partition, metadata}`.
 */
function personBody(panel: PanelSnapshot, p: Person): unknown {
  const groups = new Map(panel.groups.map((g) => [g.id, g]));
  const table: Json = {
    id: p.id,
    firstName: null,
    lastName: null,
    email: null,
    photoUrl: null,
    partition: p.partition,
    enabled: true,
    activeDate: null,
    expireDate: null,
    pin: null,
    duressPin: null,
    customAttributes: p.customAttributes,
    metadata: p.metadata,
  };
  // Object.assign keeps the table's key order: the stored values replace the defaults in place.
  return Object.assign(table, p, {
    groups: p.groups.map((id) => {
      const g = groups.get(id)! as Json;
      return { id, name: g.name, partition: g.partition, metadata: g.metadata };
    }),
    credentials: p.credentials.map((c) => credentialBody(c, p.id)),
  });
}

/** The 1.0 panel API floor group: `readerPort` as `{id, name}`, floors as `{id, name, type}`. */
function floorGroupBody(panel: PanelSnapshot, f: PanelSnapshot["floorGroups"][number]): unknown {
  const devices = new Map(panel.devices.map((d) => [d.id, d as Json]));
  const reader = devices.get(f.readerPort);
  return {
    ...f,
    readerPort: { id: f.readerPort, name: reader?.name },
    floors: f.floors.map((id) => ({ id, name: devices.get(id)?.name, type: devices.get(id)?.type })),
  };
}

/**
 * The 1.0 panel API device: the 2.0 device fields with their defaults in effect (read from the engine's
 * converted panel, which keeps the panel's order), integer ids, and the 1.0-only fields.
 */
function deviceBody(ctx: PanelReadContext, d: PanelSnapshot["devices"][number]): unknown {
  const i = ctx.panel.devices.indexOf(d);
  const {
    cloudNode: _node,
    id: _key,
    connection: _conn,
    primaryReader: _primary,
    partition: _partition,
    ...effective
  } = ctx.engine.loaded.system.devices[i]! as unknown as Json;
  // Partition entries `{id, name}` under the names the panel's partitions have (M1 names the unnamed).
  const names = new Map(ctx.engine.loaded.system.partitions.map((p) => [p.id, p.name]));
  return {
    ...effective,
    bootloaderVersion: null,
    startupVersion: null,
    ...d,
    partition: (d.partition ?? []).map((e) => ({ id: e.id, name: names.get(panelKey(e.id)) ?? e.name ?? null })),
  };
}

/**
 * A 1.0 attribute as the 2.0 custom field reads (L17): `displayName` (the id), `required` (false) and
 * `visibility` (`visible`) with their defaults, and no `partition` (the path names it) (LP13).
 */
function attributeBody({ partition: _path, ...a }: PanelSnapshot["attributes"][number]): unknown {
  return {
    ...a,
    displayName: a.displayName ?? a.id,
    required: a.required ?? false,
    visibility: a.visibility ?? "visible",
  };
}

/**
 * The 1.0 configuration, every field of its table: what the panel does not state reads as the cloud node
 * it converts to has it in effect (`locale`, `offlinePolicy`, `killTimer`), `logPurgeDays` null (LP13).
 */
function configBody(ctx: PanelReadContext): unknown {
  const node = ctx.engine.loaded.system.cloudNodes[0]!;
  const { timezone, logPurgeDays, cardFormat, locale, offlinePolicy, killTimer, ...rest } = ctx.panel.config;
  return {
    timezone,
    logPurgeDays: logPurgeDays ?? null,
    cardFormat,
    locale: locale ?? node.locale,
    offlinePolicy: offlinePolicy ?? node.offlinePolicy,
    killTimer: killTimer ?? node.killTimer,
    ...rest,
  };
}

function personOf(ctx: PanelReadContext): Person {
  return find(ctx.panel.persons, idParam(ctx.params, "personId"), "person", ctx.params.personId!);
}

function groupId(ctx: PanelReadContext): number {
  return find(ctx.panel.groups, idParam(ctx.params, "groupId"), "group", ctx.params.groupId!).id;
}

/** The handlers, before each is given the check of its query parameters (`panelReads` below). */
const handlers = {
  persons: (ctx: PanelReadContext): PanelAnswer => paged(ctx.panel.persons, ctx.query, (p) => personBody(ctx.panel, p)),
  person: (ctx: PanelReadContext): PanelAnswer => ({ body: personBody(ctx.panel, personOf(ctx)) }),
  groupPersons: (ctx: PanelReadContext): PanelAnswer => {
    const id = groupId(ctx);
    return paged(
      ctx.panel.persons.filter((p) => p.groups.includes(id)),
      ctx.query,
      (p) => personBody(ctx.panel, p),
    );
  },
  personCredentials: (ctx: PanelReadContext): PanelAnswer => {
    const p = personOf(ctx);
    return paged(p.credentials, ctx.query, (c) => credentialBody(c, p.id));
  },
  credential: (ctx: PanelReadContext): PanelAnswer => {
    const p = personOf(ctx);
    const c = find(
      p.credentials,
      idParam(ctx.params, "credentialId"),
      "credential of this person",
      ctx.params.credentialId!,
    );
    return { body: credentialBody(c, p.id) };
  },
  groups: (ctx: PanelReadContext): PanelAnswer => paged(ctx.panel.groups, ctx.query),
  group: (ctx: PanelReadContext): PanelAnswer => ({
    body: find(ctx.panel.groups, idParam(ctx.params, "groupId"), "group", ctx.params.groupId!),
  }),
  personGroups: (ctx: PanelReadContext): PanelAnswer => {
    const p = personOf(ctx);
    return paged(
      ctx.panel.groups.filter((g) => p.groups.includes(g.id)),
      ctx.query,
    );
  },
  devices: (ctx: PanelReadContext): PanelAnswer => paged(ctx.panel.devices, ctx.query, (d) => deviceBody(ctx, d)),
  device: (ctx: PanelReadContext): PanelAnswer => ({
    body: deviceBody(ctx, find(ctx.panel.devices, idParam(ctx.params, "deviceId"), "device", ctx.params.deviceId!)),
  }),
  // A connection as 2.0 answers one (L23): the defaults of its type in effect, what is not known null.
  connections: (ctx: PanelReadContext): PanelAnswer =>
    paged(ctx.panel.connections, ctx.query, (c) => connectionAnswer(c as typeof c & { type: unknown })),
  connection: (ctx: PanelReadContext): PanelAnswer => {
    const c = find(ctx.panel.connections, idParam(ctx.params, "connectionId"), "connection", ctx.params.connectionId!);
    return { body: connectionAnswer(c as typeof c & { type: unknown }) };
  },
  attributes: (ctx: PanelReadContext): PanelAnswer => {
    const partition = idParam(ctx.params, "partitionId");
    return paged(
      ctx.panel.attributes.filter((a) => a.partition === partition),
      ctx.query,
      attributeBody,
    );
  },
  attribute: (ctx: PanelReadContext): PanelAnswer => {
    const partition = idParam(ctx.params, "partitionId");
    const id = ctx.params.attributeId!;
    const a = ctx.panel.attributes.find((x) => x.id === id && x.partition === partition);
    return {
      body: attributeBody(
        a ?? refuse(404, "notFound", [], `No custom field of partition ${ctx.params.partitionId!} has id "${id}".`),
      ),
    };
  },
  floorGroups: (ctx: PanelReadContext): PanelAnswer =>
    paged(ctx.panel.floorGroups, ctx.query, (f) => floorGroupBody(ctx.panel, f)),
  floorGroup: (ctx: PanelReadContext): PanelAnswer => ({
    body: floorGroupBody(
      ctx.panel,
      find(ctx.panel.floorGroups, idParam(ctx.params, "floorGroupId"), "floor group", ctx.params.floorGroupId!),
    ),
  }),
  rules: (ctx: PanelReadContext): PanelAnswer => paged(ctx.panel.rules, ctx.query),
  rule: (ctx: PanelReadContext): PanelAnswer => ({
    body: find(ctx.panel.rules, idParam(ctx.params, "ruleId"), "rule", ctx.params.ruleId!),
  }),
  config: (ctx: PanelReadContext): PanelAnswer => ({ body: configBody(ctx) }),
  /** Hardware status and wireless diagnostics are live readings no snapshot holds: none (as for 2.0). */
  hardware: (): PanelAnswer => ({ body: [] }),
  wirelessDiagnostics: (): PanelAnswer => ({ body: [] }),
  /**
   * The 1.0 panel API "Info", from what the snapshot knows: `online` is this live panel answering; `version`
   * the software version answering (package.json's, as `rsop --version` prints it, LP9); facility
   * codes are `required` when the card format checks them (ENFORCED, FILTER_LIST), else `notSupported`.
   */
  info: (ctx: PanelReadContext): PanelAnswer => {
    const format = ctx.engine.loaded.system.cloudNodes[0]!.cardFormat[0];
    return {
      body: {
        online: true,
        version: SOFTWARE_VERSION,
        elevatorsPresent: ctx.panel.devices.some(
          (d) => d.type === "elevatorReader" || d.type === "additionalElevatorReader",
        ),
        facilityCodesSupported:
          format === undefined || format.facility_code !== "NOT_ENFORCED" ? "required" : "notSupported",
      },
    };
  },
  /** The 1.0 panel API "Search": people, groups and floor groups whose name contains `q`, case-insensitive. */
  search: (ctx: PanelReadContext): PanelAnswer => {
    const q = ctx.query.get("q");
    if (q === null || q === "") refuse(400, "required", ["query", "q"], "Is required: the text to search for.");
    const needle = q.toLowerCase();
    const has = (s: unknown) => typeof s === "string" && s.toLowerCase().includes(needle);
    const out: unknown[] = [];
    for (const p of ctx.panel.persons) {
      const name = `${String(p.firstName)} ${String(p.lastName)}`;
      if (has(name)) out.push({ id: p.id, type: "person", name, image: p.photoUrl ?? null });
    }
    for (const g of ctx.panel.groups) if (has(g.name)) out.push({ id: g.id, type: "group", name: g.name });
    for (const f of ctx.panel.floorGroups) if (has(f.name)) out.push({ id: f.id, type: "floor group", name: f.name });
    return { body: out };
  },
  rsop: (ctx: PanelReadContext): PanelAnswer => {
    const raw = ctx.query.get("ids");
    if (raw === null || raw.trim() === "")
      refuse(400, "required", ["query", "ids"], "Is required: comma-delimited person ids.");
    const parts = [
      ...new Set(
        raw
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== ""),
      ),
    ];
    const bad = parts.flatMap((s, i): Issue[] =>
      /^\d{1,15}$/.test(s)
        ? []
        : [{ code: "invalid", path: ["query", "ids", i], message: `"${s}" is not a person id (an integer).` }],
    );
    if (bad.length > 0) throw new Refusal(400, bad);
    try {
      return { body: ctx.engine.rsop(parts.map(Number), { at: ctx.query.get("at") ?? ctx.now() }) };
    } catch (e) {
      if (!(e instanceof QueryError)) throw e;
      throw new Refusal(e.issues.some((i) => i.code === "unknownId") ? 404 : 400, e.issues);
    }
  },
} satisfies Record<string, (ctx: PanelReadContext) => PanelAnswer>;

/**
 * The 1.0 read routes, each refusing a query parameter it does not take (HS4): every list pages (LP9),
 * search takes `q`, RSOP `ids` and `at`; the other reads take none.
 */
export const panelReads = withQueryKeys<PanelReadContext, PanelAnswer, typeof handlers>(handlers, {
  persons: PAGING,
  person: [],
  groupPersons: PAGING,
  personCredentials: PAGING,
  credential: [],
  groups: PAGING,
  group: [],
  personGroups: PAGING,
  devices: PAGING,
  device: [],
  connections: PAGING,
  connection: [],
  attributes: PAGING,
  attribute: [],
  floorGroups: PAGING,
  floorGroup: [],
  rules: PAGING,
  rule: [],
  config: [],
  // Lists answered 501 (H30), as the 2.0 ones.
  hardware: PAGING,
  wirelessDiagnostics: PAGING,
  info: [],
  search: ["q"],
  rsop: ["ids", "at"],
});
