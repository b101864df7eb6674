// The 2.0 systems API read routes over the current snapshot: retrieve, lists (search, ids, paging), holders
// of a group, groups of a holder, credentials, facility codes, RSOP.
import type { Engine } from "../../evaluate/index.js";
import {
  type CloudNode,
  type Connection,
  type CustomField,
  type Device,
  type FloorGroup,
  type Holder,
  type Partition,
  QueryError,
  type SystemSnapshot,
} from "../../model/index.js";
import { Refusal, notFound, refuse } from "../operation.js";
import { pageOf } from "../routeTable.js";
import { PAGING, withQueryKeys } from "../queryKeys.js";

export interface ReadContext {
  readonly snapshot: SystemSnapshot;
  readonly engine: Engine;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The live system's clock: the RSOP instant when the query names none. */
  readonly now: () => number;
  /** The operation asked for the body's JSON as bytes, with this indentation (Operation `jsonBytes`). */
  readonly jsonBytes?: { readonly indent: number };
}

export interface Answer {
  readonly body: unknown;
  readonly total?: number;
  readonly json?: Uint8Array;
}

const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const badPage = (key: string, min: number, max: number): never =>
  refuse(400, "invalid", ["query", key], `Must be a whole number from ${min} to ${max}.`);

/** One page of `items` (by id), with the total before paging (page 0-based, per_page ≤ 100). */
export function paged<T extends { id: string }>(
  items: readonly T[],
  query: URLSearchParams,
  map: (x: T) => unknown = (x) => x,
): Answer {
  return pageOf(items, query, map, badPage);
}

/** Partial, case-insensitive match; a quoted operand (`"Ann"`) matches a whole value exactly. */
export function matcher(search: string | null): (values: readonly (string | null)[]) => boolean {
  if (search === null || search === "") return () => true;
  const quoted = search.length >= 2 && search.startsWith('"') && search.endsWith('"');
  const needle = (quoted ? search.slice(1, -1) : search).toLowerCase();
  return quoted
    ? (values) => values.some((v) => v !== null && v.toLowerCase() === needle)
    : (values) => values.some((v) => v !== null && v.toLowerCase().includes(needle));
}

function find<T extends { id: string }>(list: readonly T[], id: string, what: string): T {
  return list.find((x) => x.id === id) ?? notFound(what, id);
}

/** The API's holder: groups as `{id, name, partition}`, credentials as objects. */
function holderBody(s: SystemSnapshot, h: Holder): unknown {
  const groups = new Map(s.groups.map((g) => [g.id, g]));
  return { ...h, groups: h.groups.map((id) => groups.get(id)!) };
}

/** The API's floor group: `readerPort` and `floors` as partial devices. */
function floorGroupBody(s: SystemSnapshot, f: FloorGroup): unknown {
  const devices = new Map(s.devices.map((d) => [d.id, d]));
  const nodes = new Map(s.cloudNodes.map((n) => [n.id, n]));
  const reader = devices.get(f.readerPort)!;
  const node = nodes.get(reader.cloudNode)!;
  return {
    id: f.id,
    name: f.name,
    partition: f.partition,
    readerPort: {
      id: reader.id,
      name: reader.name,
      cloudNode: { id: node.id, serialNumber: node.serialNumber, name: node.name },
    },
    floors: f.floors.map((id) => {
      const d = devices.get(id)!;
      return { id: d.id, name: d.name, type: d.type };
    }),
  };
}

const HOLDER_SEARCH_FIELDS = ["firstName", "lastName", "email", "pin"] as const;

/**
 * The `include` values of a list (the 2.0 systems API), each checked against the route's own set: an unknown
 * one is a 400, as an unknown search field is (semantics L15).
 */
function includes(query: URLSearchParams, allowed: readonly string[]): Set<string> {
  const raw = query.get("include");
  if (raw === null || raw.trim() === "") return new Set();
  const asked = raw
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
  const bad = asked.find((x) => !allowed.includes(x));
  if (bad !== undefined)
    refuse(400, "invalid", ["query", "include"], `Unknown include "${bad}": use ${allowed.join(", ")}.`);
  return new Set(asked);
}

/**
 * A connection as the API's connection table lists it (docs/semantics.md L23): every field, a state the
 * system does not know (`connected`, the network settings) null rather than left out; `protocol` and
 * `manufacturer` only on an ethernet controller (S13); no `cloudNode` (the path names it). Shared with the
 * 1.0 panel, whose connection has the same fields with an integer id.
 */
export function connectionAnswer<C extends { readonly id: unknown; readonly type: unknown }>(c: C): unknown {
  const x = c as unknown as Partial<Record<keyof Connection | "macaddress", unknown>>;
  const ethernet = x.type === "ethernet";
  return {
    id: x.id,
    name: x.name ?? null,
    type: x.type,
    connected: x.connected ?? null,
    ...(ethernet ? { protocol: x.protocol ?? "IPv6" } : {}),
    ipaddress: x.ipaddress ?? null,
    ipv6Address: x.ipv6Address ?? null,
    port: x.port ?? null,
    dhcp: x.dhcp ?? null,
    netmask: x.netmask ?? null,
    gateway: x.gateway ?? null,
    dns: x.dns ?? null,
    // A 1.0 panel file may spell it as the request does (`macaddress`).
    macAddress: x.macAddress ?? x.macaddress ?? null,
    ...(ethernet ? { manufacturer: x.manufacturer ?? "VENDOR_B" } : {}),
  };
}

/** A partition as the API answers it: `default` only on the default partition (L24). */
function partitionBody({ default: isDefault, ...p }: Partition): Record<string, unknown> {
  return isDefault ? { ...p, default: true } : p;
}

/**
 * A device as the API's device table lists it (L23): its partitions as `{id, name, default}` under their
 * current names, and no `cloudNode` (the path names it).
 */
function deviceBody(s: SystemSnapshot, { cloudNode: _path, ...d }: Device): Record<string, unknown> {
  return {
    ...d,
    partition: d.partition.map((e) => {
      const p = s.partitions.find((x) => x.id === e.id);
      return { id: e.id, name: p?.name ?? e.name ?? null, default: p?.default === true };
    }),
  };
}

/** A cloud node as the API answers it: its `threatLevel` always, 0 when none is set (TL1). */
function cloudNodeBody(n: CloudNode): unknown {
  return { ...n, threatLevel: n.threatLevel ?? 0 };
}

function partitionRef(s: SystemSnapshot, id: string | null): unknown {
  if (id === null) return null;
  const p = s.partitions.find((x) => x.id === id)!;
  return { id: p.id, name: p.name };
}

/** The API's custom field: the definition without the snapshot's `partition` (the path names it). */
function customFieldBody({ partition: _path, ...d }: CustomField): unknown {
  return d;
}

/** The custom fields of a partition, by id. */
function fieldsOf(s: SystemSnapshot, partition: string): CustomField[] {
  return s.customFields.filter((d) => d.partition === partition).sort(byId);
}

function partialHolder(h: Holder): unknown {
  return {
    id: h.id,
    firstName: h.firstName,
    lastName: h.lastName,
    enabled: h.enabled,
    partition: h.partition,
    email: h.email,
  };
}

/** Most distinct holder ids one RSOP read names (HP3). */
export const MAX_RSOP_IDS = 100;

/** The handlers, before each is given the check of its query parameters (`reads` below). */
const handlers = {
  holder: ({ snapshot, params }: ReadContext): Answer => ({
    body: holderBody(snapshot, find(snapshot.holders, params.holderId!, "holder")),
  }),
  holders: ({ snapshot, query }: ReadContext): Answer => {
    const asked = (query.get("search_fields") ?? "")
      .split(",")
      .map((f) => f.trim())
      .filter((f) => f !== "");
    const fields = asked.length > 0 ? asked : ["firstName", "lastName", "email"];
    const bad = fields.filter((f) => !(HOLDER_SEARCH_FIELDS as readonly string[]).includes(f));
    if (bad.length > 0)
      refuse(
        400,
        "invalid",
        ["query", "search_fields"],
        `Unknown search field "${bad[0]}": use ${HOLDER_SEARCH_FIELDS.join(", ")}.`,
      );
    const include = includes(query, ["credentials", "groups", "partition", "rules"]);
    const match = matcher(query.get("search"));
    const hits = snapshot.holders.filter((h) =>
      match(fields.map((f) => h[f as (typeof HOLDER_SEARCH_FIELDS)[number]] ?? null)),
    );
    return paged(hits, query, (h) => {
      const body = holderBody(snapshot, h) as Record<string, unknown>;
      if (include.has("partition")) body.partition = partitionRef(snapshot, h.partition);
      if (include.has("rules")) body.rules = snapshot.rules.filter((r) => h.groups.includes(r.groupId)).sort(byId);
      return body;
    });
  },
  group: ({ snapshot, params }: ReadContext): Answer => ({ body: find(snapshot.groups, params.groupId!, "group") }),
  groups: ({ snapshot, query }: ReadContext): Answer => {
    const ids = query.get("ids");
    let list = snapshot.groups;
    if (ids !== null && ids !== "") {
      const wanted = new Set(
        ids
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== ""),
      );
      if (wanted.size > 50) refuse(400, "tooBig", ["query", "ids"], "Names at most 50 ids.");
      list = list.filter((g) => wanted.has(g.id));
    }
    const include = includes(query, ["holders", "partition", "rules"]);
    const match = matcher(query.get("search"));
    return paged(
      list.filter((g) => match([g.name])),
      query,
      (g) => ({
        ...g,
        ...(include.has("partition") ? { partition: partitionRef(snapshot, g.partition) } : {}),
        ...(include.has("holders")
          ? {
              holders: snapshot.holders
                .filter((h) => h.groups.includes(g.id))
                .sort(byId)
                .map(partialHolder),
            }
          : {}),
        ...(include.has("rules") ? { rules: snapshot.rules.filter((r) => r.groupId === g.id).sort(byId) } : {}),
      }),
    );
  },
  groupHolders: ({ snapshot, params, query }: ReadContext): Answer => {
    const id = find(snapshot.groups, params.groupId!, "group").id;
    return paged(
      snapshot.holders.filter((h) => h.groups.includes(id)),
      query,
      partialHolder,
    );
  },
  holderGroups: ({ snapshot, params, query }: ReadContext): Answer => {
    const h = find(snapshot.holders, params.holderId!, "holder");
    return paged(
      snapshot.groups.filter((g) => h.groups.includes(g.id)),
      query,
    );
  },
  credentials: ({ snapshot, query }: ReadContext): Answer =>
    paged(
      snapshot.holders.flatMap((h) => h.credentials),
      query,
    ),
  holderCredentials: ({ snapshot, params, query }: ReadContext): Answer =>
    paged(find(snapshot.holders, params.holderId!, "holder").credentials, query),
  credential: ({ snapshot, params }: ReadContext): Answer => ({
    body: find(
      find(snapshot.holders, params.holderId!, "holder").credentials,
      params.credentialId!,
      "credential of this holder",
    ),
  }),
  facilityCodes: ({ snapshot, query }: ReadContext): Answer => {
    const codes = new Set<number>();
    for (const h of snapshot.holders)
      for (const c of h.credentials) if (c.facilityCode !== null) codes.add(c.facilityCode);
    const sorted = [...codes].sort((a, b) => a - b).map((c) => ({ id: String(c).padStart(16, "0"), code: String(c) }));
    const page = paged(sorted, query, (x) => x.code);
    return page;
  },
  rule: ({ snapshot, params }: ReadContext): Answer => ({ body: find(snapshot.rules, params.ruleId!, "rule") }),
  rules: ({ snapshot, query }: ReadContext): Answer => paged(snapshot.rules, query),
  cloudNode: ({ snapshot, params }: ReadContext): Answer => ({
    body: cloudNodeBody(find(snapshot.cloudNodes, params.cloudNodeId!, "cloud node")),
  }),
  cloudNodes: ({ snapshot, query }: ReadContext): Answer => {
    const match = matcher(query.get("search"));
    return paged(
      snapshot.cloudNodes.filter((n) => match([n.name, n.serialNumber, n.description])),
      query,
      cloudNodeBody,
    );
  },
  hardware: ({ snapshot, params }: ReadContext): Answer => {
    find(snapshot.cloudNodes, params.cloudNodeId!, "cloud node");
    return { body: [] };
  },
  wirelessDiagnostics: ({ snapshot, params }: ReadContext): Answer => {
    find(snapshot.cloudNodes, params.cloudNodeId!, "cloud node");
    return { body: [] };
  },
  connection: ({ snapshot, params }: ReadContext): Answer => {
    find(snapshot.cloudNodes, params.cloudNodeId!, "cloud node");
    const c = snapshot.connections.find((x) => x.id === params.connectionId && x.cloudNode === params.cloudNodeId);
    return {
      body: connectionAnswer(c ?? notFound(`connection on cloud node "${params.cloudNodeId}"`, params.connectionId!)),
    };
  },
  connections: ({ snapshot, query }: ReadContext): Answer => paged(snapshot.connections, query, connectionAnswer),
  device: ({ snapshot, params, query }: ReadContext): Answer => {
    find(snapshot.cloudNodes, params.cloudNodeId!, "cloud node");
    const d = snapshot.devices.find((x) => x.id === params.deviceId && x.cloudNode === params.cloudNodeId);
    if (d === undefined) notFound(`device on cloud node "${params.cloudNodeId}"`, params.deviceId!);
    const body = deviceBody(snapshot, d);
    if (!includes(query, ["connection"]).has("connection")) return { body };
    const c = snapshot.connections.find((x) => x.id === d.connection);
    return { body: { ...body, connection: c === undefined ? d.connection : { id: c.id, name: c.name, type: c.type } } };
  },
  partition: ({ snapshot, params }: ReadContext): Answer => ({
    body: partitionBody(find(snapshot.partitions, params.partitionId!, "partition")),
  }),
  partitions: ({ snapshot, query }: ReadContext): Answer => {
    const include = includes(query, ["attributes", "devices", "users"]);
    const match = matcher(query.get("search"));
    return paged(
      snapshot.partitions.filter((p) => match([p.name])),
      query,
      (p) => ({
        ...partitionBody(p),
        ...(include.has("devices")
          ? {
              devices: snapshot.devices
                .filter((d) => d.partition.some((e) => e.id === p.id))
                .sort(byId)
                .map((d) => ({ id: d.id, name: d.name, type: d.type })),
            }
          : {}),
        ...(include.has("attributes") ? { attributes: fieldsOf(snapshot, p.id).map(customFieldBody) } : {}),
      }),
    );
  },
  customFields: ({ snapshot, params, query }: ReadContext): Answer => {
    const p = find(snapshot.partitions, params.partitionId!, "partition");
    return paged(fieldsOf(snapshot, p.id), query, customFieldBody);
  },
  customField: ({ snapshot, params }: ReadContext): Answer => {
    const p = find(snapshot.partitions, params.partitionId!, "partition");
    const d = snapshot.customFields.find((x) => x.partition === p.id && x.id === params.customFieldId);
    return { body: customFieldBody(d ?? notFound(`custom field of partition "${p.id}"`, params.customFieldId!)) };
  },
  calendar: ({ snapshot, params }: ReadContext): Answer => ({
    body: find(snapshot.calendars, params.calendarId!, "calendar"),
  }),
  calendars: ({ snapshot, query }: ReadContext): Answer => {
    const match = matcher(query.get("search"));
    return paged(snapshot.calendars.filter((c) => match([c.name])).sort(byId), query);
  },
  area: ({ snapshot, params }: ReadContext): Answer => ({ body: find(snapshot.areas, params.areaId!, "area") }),
  areas: ({ snapshot, query }: ReadContext): Answer => {
    const match = matcher(query.get("search"));
    return paged(
      snapshot.areas.filter((a) => match([a.name])),
      query,
    );
  },
  floorGroup: ({ snapshot, params }: ReadContext): Answer => ({
    body: floorGroupBody(snapshot, find(snapshot.floorGroups, params.floorGroupId!, "floor group")),
  }),
  floorGroups: ({ snapshot, query }: ReadContext): Answer => {
    const match = matcher(query.get("search"));
    return paged(
      snapshot.floorGroups.filter((f) => match([f.name])),
      query,
      (f) => floorGroupBody(snapshot, f),
    );
  },
  rsop: ({ engine, query, params, now, jsonBytes }: ReadContext): Answer => {
    const raw = query.get("ids");
    if (raw === null || raw.trim() === "")
      refuse(400, "required", ["query", "ids"], "Is required: comma-delimited holder ids.");
    const ids = [
      ...new Set(
        raw
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== ""),
      ),
    ];
    // A bound on the work and answer of one request, as `rsop serve --system` has (HP3).
    if (ids.length > MAX_RSOP_IDS)
      refuse(
        400,
        "tooBig",
        ["query", "ids"],
        `Names at most ${MAX_RSOP_IDS} holder ids per request; got ${ids.length}.`,
      );
    try {
      const options = {
        at: query.get("at") ?? now(),
        ...(params.cloudNodeId ? { cloudNodeId: params.cloudNodeId } : {}),
      };
      return jsonBytes === undefined
        ? { body: engine.rsop(ids, options) }
        : { body: undefined, json: engine.rsopJsonBytes(ids, options, jsonBytes.indent) };
    } catch (e) {
      if (!(e instanceof QueryError)) throw e;
      throw new Refusal(e.issues.some((i) => i.code === "unknownId") ? 404 : 400, e.issues);
    }
  },
} satisfies Record<string, (ctx: ReadContext) => Answer>;

const SEARCH_LIST = ["search", ...PAGING];

/**
 * The read routes, each refusing a query parameter it does not take (HS4). Which parameters: the 2.0 systems API
 * §4's row of the route; every list pages (L5), RSOP takes `at` (L13), a device `include` (connection).
 */
export const reads = withQueryKeys<ReadContext, Answer, typeof handlers>(handlers, {
  holder: [],
  holders: ["search", "search_fields", "include", ...PAGING],
  group: [],
  groups: ["search", "ids", "include", ...PAGING],
  groupHolders: PAGING,
  holderGroups: PAGING,
  credentials: PAGING,
  holderCredentials: PAGING,
  credential: [],
  facilityCodes: PAGING,
  rule: [],
  rules: PAGING,
  cloudNode: [],
  cloudNodes: SEARCH_LIST,
  // Lists (the 2.0 systems API "List hardware"); answered 501 (H30), so paging a client sends changes nothing.
  hardware: PAGING,
  wirelessDiagnostics: PAGING,
  connection: [],
  connections: PAGING,
  device: ["include"],
  partition: [],
  partitions: ["search", "include", ...PAGING],
  customFields: PAGING,
  customField: [],
  floorGroup: [],
  floorGroups: SEARCH_LIST,
  calendar: [],
  calendars: SEARCH_LIST,
  area: [],
  areas: SEARCH_LIST,
  rsop: ["ids", "at"],
});
