// A deliberately naive holder report (SPEC §11 and docs/semantics.md RP lines), written from the
// text and not from src/: it reads the snapshot's input JSON as it is, checks every filter with plain
// loops and sorts by insertion. The property test compares src/reports against it.

type Json = Record<string, any>;

function lower(s: string, caseSensitive: boolean): string {
  return caseSensitive ? s : s.toLowerCase();
}

function textHolds(value: string | null | undefined, f: Json): boolean {
  const v = lower(value ?? "", f.caseSensitive === true);
  const o = lower(f.operand, f.caseSensitive === true);
  if (f.operator === "equals") return v === o;
  if (f.operator === "does not equal") return v !== o;
  if (f.operator === "contains") return v.indexOf(o) >= 0;
  if (f.operator === "does not contain") return v.indexOf(o) < 0;
  throw new Error("unknown operator");
}

function isIn(id: string | null, ids: string[] | undefined): boolean {
  if (ids === undefined) return false;
  for (const x of ids) if (x === id) return true;
  return false;
}

/** The holder's partition; none means the system's default partition (RP2). */
function partitionOf(snapshot: Json, h: Json): string | null {
  if (h.partition !== null && h.partition !== undefined) return h.partition;
  for (const p of snapshot.partitions ?? []) if (p.default === true) return p.id;
  return null;
}

function holds(snapshot: Json, h: Json, f: Json): boolean {
  const groups: string[] = h.groups ?? [];
  const creds: Json[] = h.credentials ?? [];
  switch (f.type) {
    case "firstName":
    case "lastName":
    case "email":
      return textHolds(h[f.type], f);
    case "enabled":
      return (h.enabled ?? true) === f.value;
    case "groups": {
      let inAny = false;
      for (const g of groups) if (isIn(g, f.memberOf)) inAny = true;
      let inNot = false;
      for (const g of groups) if (isIn(g, f.notMemberOf)) inNot = true;
      return (f.memberOf === undefined || inAny) && (f.notMemberOf === undefined || !inNot);
    }
    case "partition": {
      const p = partitionOf(snapshot, h);
      if (f.memberOf !== undefined && !isIn(p, f.memberOf)) return false;
      if (f.notMemberOf !== undefined && isIn(p, f.notMemberOf)) return false;
      return true;
    }
    case "credentials": {
      if (f.cardNumber !== undefined) {
        let has = false;
        for (const c of creds) if (c.types.includes("card") && c.credentialNumber === f.cardNumber.operand) has = true;
        if (f.cardNumber.operator === "equals" && !has) return false;
        if (f.cardNumber.operator === "does not equal" && has) return false;
      }
      if (f.mobile !== undefined) {
        let has = false;
        for (const c of creds) {
          if (c.types.includes("card") || !c.types.includes(f.mobile.type)) continue;
          const accepted = c.credentialNumber !== null && c.credentialNumber !== undefined;
          if (accepted === (f.mobile.status === "accepted")) has = true;
        }
        if (!has) return false;
      }
      return true;
    }
  }
  throw new Error(`unknown filter type ${f.type}`);
}

/** a before b: lastName, firstName, id, each in UTF-16 code-unit order (RP3). */
function before(a: Json, b: Json): boolean {
  for (const k of ["lastName", "firstName", "id"]) {
    if (a[k] < b[k]) return true;
    if (a[k] > b[k]) return false;
  }
  return false;
}

function recordOf(snapshot: Json, h: Json): Json {
  let partitionName: string | null = null;
  const p = partitionOf(snapshot, h);
  for (const x of snapshot.partitions ?? []) if (x.id === p) partitionName = x.name;
  const cards: string[] = [];
  let bluetooth = 0,
    pendingBluetooth = 0,
    mobileApp = 0,
    pendingMobileApp = 0;
  for (const c of h.credentials ?? []) {
    if (c.types.includes("card")) {
      cards.push(String(c.credentialNumber));
      continue;
    }
    const pending = c.credentialNumber === null || c.credentialNumber === undefined;
    if (c.types.includes("touch")) pending ? pendingBluetooth++ : bluetooth++;
    if (c.types.includes("token")) pending ? pendingMobileApp++ : mobileApp++;
  }
  const groupNames: string[] = [];
  for (const g of h.groups ?? []) for (const x of snapshot.groups ?? []) if (x.id === g) groupNames.push(x.name);
  const date = (d: string | null | undefined) =>
    d === null || d === undefined ? null : `${d.slice(0, 10)} ${d.slice(11)}`;
  return {
    id: h.id,
    firstName: h.firstName,
    lastName: h.lastName,
    email: h.email ?? null,
    partition: partitionName,
    cards: cards.join(", "),
    groups: groupNames.join(", "),
    pin: h.pin ?? null,
    duressPin: h.duressPin ?? null,
    enabled: h.enabled ?? true,
    activeDate: date(h.activeDate),
    expireDate: date(h.expireDate),
    bluetooth,
    pendingBluetooth,
    mobileApp,
    pendingMobileApp,
    customFields: JSON.stringify(h.customFields ?? {}),
  };
}

const ALL = [
  "id",
  "firstName",
  "lastName",
  "email",
  "partition",
  "cards",
  "groups",
  "pin",
  "duressPin",
  "enabled",
  "activeDate",
  "expireDate",
  "bluetooth",
  "pendingBluetooth",
  "mobileApp",
  "pendingMobileApp",
  "customFields",
];

/** The holder report of a snapshot's input JSON for a valid body. */
export function holderReportNaive(snapshot: Json, body: Json): Json[] {
  const picked: Json[] = [];
  for (const h of snapshot.holders ?? []) {
    if (body.partition !== undefined && partitionOf(snapshot, h) !== body.partition) continue;
    let ok = true;
    for (const f of body.filters ?? []) if (!holds(snapshot, h, f)) ok = false;
    if (ok) picked.push(h);
  }
  // insertion sort
  const sorted: Json[] = [];
  for (const h of picked) {
    let i = sorted.length;
    while (i > 0 && before(h, sorted[i - 1]!)) i--;
    sorted.splice(i, 0, h);
  }
  const output: string[] = body.output ?? ALL;
  return sorted.map((h) => {
    const full = recordOf(snapshot, h);
    const out: Json = {};
    for (const k of output) out[k] = full[k];
    return out;
  });
}
