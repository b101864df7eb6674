// Who still references an entity: the 409 of a delete names each referrer with its snapshot path.
import type { Issue, SystemSnapshot } from "../../model/index.js";
import { Refusal } from "../operation.js";

type Referrer = Issue;

function ref(path: (string | number)[], message: string): Referrer {
  return { code: "conflict", path, message };
}

export function deviceReferrers(s: SystemSnapshot, id: string): Referrer[] {
  const out: Referrer[] = [];
  s.rules.forEach((r, i) => {
    const j = r.devices.indexOf(id);
    if (j >= 0) out.push(ref(["rules", i, "devices", j], `Rule "${r.id}" opens device "${id}".`));
  });
  s.floorGroups.forEach((f, i) => {
    if (f.readerPort === id)
      out.push(ref(["floorGroups", i, "readerPort"], `Floor group "${f.id}" uses device "${id}" as its reader.`));
    const j = f.floors.indexOf(id);
    if (j >= 0) out.push(ref(["floorGroups", i, "floors", j], `Floor group "${f.id}" opens floor "${id}".`));
  });
  s.devices.forEach((d, i) => {
    if (d.primaryReader === id)
      out.push(ref(["devices", i, "primaryReader"], `Device "${d.id}" is an additional reader of "${id}".`));
  });
  // An area's entries and exits (AB1): the area must be changed first, as a rule naming the device.
  s.areas.forEach((a, i) => {
    for (const list of ["entries", "exits"] as const) {
      const j = a[list].indexOf(id);
      if (j >= 0)
        out.push(
          ref(
            ["areas", i, list, j],
            `Area "${a.id}" has device "${id}" as ${list === "entries" ? "an entry" : "an exit"}: change or delete the area first.`,
          ),
        );
    }
  });
  return out;
}

export function floorGroupReferrers(s: SystemSnapshot, id: string): Referrer[] {
  const out: Referrer[] = [];
  s.rules.forEach((r, i) => {
    const j = r.floorGroups.indexOf(id);
    if (j >= 0) out.push(ref(["rules", i, "floorGroups", j], `Elevator rule "${r.id}" opens floor group "${id}".`));
  });
  return out;
}

export function connectionReferrers(s: SystemSnapshot, id: string): Referrer[] {
  return s.devices.flatMap((d, i) =>
    d.connection === id ? [ref(["devices", i, "connection"], `Device "${d.id}" sits on connection "${id}".`)] : [],
  );
}

export function cloudNodeReferrers(s: SystemSnapshot, id: string): Referrer[] {
  return [
    ...s.connections.flatMap((c, i) =>
      c.cloudNode === id
        ? [ref(["connections", i, "cloudNode"], `Connection "${c.id}" belongs to cloud node "${id}".`)]
        : [],
    ),
    ...s.devices.flatMap((d, i) =>
      d.cloudNode === id ? [ref(["devices", i, "cloudNode"], `Device "${d.id}" belongs to cloud node "${id}".`)] : [],
    ),
  ];
}

export function partitionReferrers(s: SystemSnapshot, id: string): Referrer[] {
  const out: Referrer[] = [];
  s.holders.forEach(
    (h, i) =>
      h.partition === id && out.push(ref(["holders", i, "partition"], `Holder "${h.id}" is in partition "${id}".`)),
  );
  s.groups.forEach(
    (g, i) =>
      g.partition === id && out.push(ref(["groups", i, "partition"], `Group "${g.id}" is in partition "${id}".`)),
  );
  s.floorGroups.forEach(
    (f, i) =>
      f.partition === id &&
      out.push(ref(["floorGroups", i, "partition"], `Floor group "${f.id}" is in partition "${id}".`)),
  );
  s.devices.forEach((d, i) => {
    const j = d.partition.findIndex((p) => p.id === id);
    if (j >= 0) out.push(ref(["devices", i, "partition", j], `Device "${d.id}" is in partition "${id}".`));
  });
  s.customFields.forEach(
    (f, i) =>
      f.partition === id &&
      out.push(ref(["customFields", i, "partition"], `Custom field "${f.id}" belongs to partition "${id}".`)),
  );
  s.calendars.forEach(
    (c, i) =>
      c.partition === id && out.push(ref(["calendars", i, "partition"], `Calendar "${c.id}" is in partition "${id}".`)),
  );
  return out;
}

/** The rules that follow calendar `id` (docs/semantics.md C7). */
export function calendarReferrers(s: SystemSnapshot, id: string): Referrer[] {
  return s.rules.flatMap((r, i) =>
    r.calendar?.id === id
      ? [
          ref(
            ["rules", i, "calendar", "id"],
            `Rule "${r.id}" follows calendar "${id}": change or delete the rule first.`,
          ),
        ]
      : [],
  );
}

/** 409 naming every referrer, when there is any. */
export function refuseIfReferenced(referrers: readonly Referrer[]): void {
  if (referrers.length > 0) throw new Refusal(409, referrers);
}
