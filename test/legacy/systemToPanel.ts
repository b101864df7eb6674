// Test helper: turns a generated 2.0 snapshot into a 1.0 panel (its first cloud node, integer ids,
// rule times cut to HH:mm), with the id maps used, so generated requests can be replayed on both.
import type { SystemSnapshotInput } from "../../src/model/index.js";

type Json = Record<string, any>;

export interface PanelCase {
  readonly panel: Json;
  /** 2.0 id → 1.0 integer, per collection. */
  readonly ids: { device: Map<string, number>; credential: Map<string, number>; holder: Map<string, number> };
}

const refId = (v: unknown): string => (typeof v === "string" ? v : (v as Json).id);

function numbering(ids: readonly string[]): Map<string, number> {
  return new Map(ids.map((id, i) => [id, i + 1]));
}

export function systemToPanel(input: SystemSnapshotInput): PanelCase {
  const s = input as Json;
  const node: Json = s.cloudNodes[0];
  const onNode: Json[] = (s.devices ?? []).filter((d: Json) => d.cloudNode === node.id);
  const onNodeIds = new Set(onNode.map((d) => d.id));
  // An additional reader whose primary reader sits on another node cannot come along.
  const devices = onNode.filter(
    (d) => d.primaryReader === undefined || d.primaryReader === null || onNodeIds.has(refId(d.primaryReader)),
  );
  const deviceIds = new Set(devices.map((d) => d.id));
  const connections: Json[] = (s.connections ?? []).filter((c: Json) => c.cloudNode === node.id);
  const floorGroups: Json[] = (s.floorGroups ?? []).filter((f: Json) => deviceIds.has(refId(f.readerPort)));
  const fgIds = new Set(floorGroups.map((f) => f.id));
  const rules: Json[] = (s.rules ?? []).map((r: Json) => ({
    ...r,
    devices: (r.devices ?? []).filter((d: string) => deviceIds.has(d)),
    floorGroups: (r.floorGroups ?? []).filter((f: string) => fgIds.has(f)),
  }));
  const holders: Json[] = s.holders ?? [];
  const nDev = numbering(devices.map((d) => d.id));
  const nConn = numbering(connections.map((c) => c.id));
  const nFg = numbering(floorGroups.map((f) => f.id));
  const nGroup = numbering((s.groups ?? []).map((g: Json) => g.id));
  const nHolder = numbering(holders.map((h) => h.id));
  const nRule = numbering(rules.map((r) => r.id));
  const nCred = numbering(holders.flatMap((h) => (h.credentials ?? []).map((c: Json) => c.id)));
  const formats: Json[] = node.cardFormat ?? [];
  const panel: Json = {
    format: "rsop-panel/1",
    serialNumber: node.serialNumber ?? `SN-${node.id}`,
    name: node.name,
    config: {
      timezone: node.timezone ?? s.timezone ?? "UTC",
      cardFormat: formats.length > 0 ? formats[0] : null,
      ...(node.offlinePolicy !== undefined ? { offlinePolicy: node.offlinePolicy } : {}),
      ...(node.killTimer !== undefined ? { killTimer: node.killTimer } : {}),
    },
    ecards: node.ecards ?? [],
    groups: (s.groups ?? []).map((g: Json) => ({ id: nGroup.get(g.id), name: g.name })),
    // Every person is in partition 0, so are the custom fields: 1.0 has no regex description, and
    // persons that were outside the fields' partition have no values, so none is required.
    attributes: (s.customFields ?? []).map(({ partition: _p, description: _d, ...d }: Json) => ({
      ...d,
      required: false,
      partition: 0,
    })),
    persons: holders.map((h) => ({
      ...h,
      id: nHolder.get(h.id),
      partition: 0,
      customFields: undefined,
      customAttributes: h.customFields ?? {},
      groups: (h.groups ?? []).map((g: unknown) => nGroup.get(refId(g))),
      credentials: (h.credentials ?? []).map((c: Json) => ({
        ...c,
        id: nCred.get(c.id),
        personId: nHolder.get(h.id),
        holderId: undefined,
      })),
    })),
    connections: connections.map((c) => ({ ...c, id: nConn.get(c.id), cloudNode: undefined })),
    devices: devices.map((d) => ({
      ...d,
      id: nDev.get(d.id),
      cloudNode: undefined,
      connection: nConn.get(refId(d.connection)),
      primaryReader:
        d.primaryReader === undefined || d.primaryReader === null ? null : nDev.get(refId(d.primaryReader)),
      publicIcon: d.publicIcon ?? null,
      partition: [],
    })),
    floorGroups: floorGroups.map((f) => ({
      id: nFg.get(f.id),
      name: f.name,
      readerPort: nDev.get(refId(f.readerPort)),
      floors: f.floors.map((x: unknown) => nDev.get(refId(x))),
    })),
    rules: rules.map((r) => ({
      ...r,
      id: nRule.get(r.id),
      groupId: nGroup.get(r.groupId),
      devices: r.devices.map((d: string) => nDev.get(d)),
      floorGroups: r.floorGroups.map((f: string) => nFg.get(f)),
      startTime: String(r.startTime).slice(0, 5),
      stopTime: String(r.stopTime).slice(0, 5),
    })),
  };
  return { panel: JSON.parse(JSON.stringify(panel)), ids: { device: nDev, credential: nCred, holder: nHolder } };
}
