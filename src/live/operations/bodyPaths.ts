// Issues of the resulting snapshot that concern the entity an operation wrote are reported at the
// request body (`body.groups.0`), not at a snapshot index the client never saw (`holders.3.groups.0`).
import type { Issue, SystemSnapshot } from "../../model/index.js";

type Path = readonly (string | number)[];
type Entity = { readonly id?: unknown } & Record<string, unknown>;

function listOf(s: SystemSnapshot, coll: string | number): readonly Entity[] | undefined {
  const list = (s as unknown as Record<string, unknown>)[coll];
  return Array.isArray(list) ? (list as Entity[]) : undefined;
}

/** `path` under `body` when it points into the entity `targetId` (top-level, or a holder's credential). */
export function bodyPath(s: SystemSnapshot, path: Path, targetId: string): Path {
  const [coll, i] = path;
  if (coll === undefined || typeof i !== "number") return path;
  if (listOf(s, coll)?.[i]?.id === targetId) {
    // A device's node comes from the route; what the body chose wrongly is the connection.
    if (coll === "devices" && path[2] === "cloudNode" && path.length === 3) return ["body", "connection"];
    return ["body", ...path.slice(2)];
  }
  if (coll === "holders" && path[2] === "credentials" && typeof path[3] === "number")
    if (s.holders[i]?.credentials[path[3]]?.id === targetId) return ["body", ...path.slice(4)];
  return path;
}

/**
 * A uniqueness conflict is reported by the snapshot at the later of the two entities. When that is
 * the other party and the earlier one is the written entity, report it at the body instead, naming
 * the other party by its snapshot path.
 */
function otherParty(s: SystemSnapshot, issue: Issue, targetId: string): Issue | null {
  const p = issue.path;
  // A full lockhub is the written device's problem: the connection its body chose.
  if (issue.code === "overCapacity" && p[0] === "connections" && typeof p[1] === "number") {
    const hub = s.connections[p[1]];
    const mine = s.devices.find((d) => d.id === targetId);
    return hub !== undefined && mine !== undefined && mine.connection === hub.id
      ? { ...issue, path: ["body", "connection"] }
      : null;
  }
  if ((issue.code === "duplicateName" || issue.code === "portInUse") && p.length === 3 && typeof p[1] === "number") {
    const list = listOf(s, p[0]!);
    const field = p[2] as string;
    const other = list?.[p[1]];
    const mine = list?.find((e) => e.id === targetId);
    if (other === undefined || mine === undefined || mine === other || mine[field] !== other[field]) return null;
    if (issue.code === "portInUse" && mine.connection !== other.connection) return null;
    const what =
      issue.code === "portInUse"
        ? `Port ${String(mine.port)} of connection "${String(mine.connection)}"`
        : `The name "${String(mine.name)}"`;
    return { code: issue.code, path: ["body", field], message: `${what} is already used by ${String(p[0])}[${p[1]}].` };
  }
  if (
    issue.code === "duplicateCredentialNumber" &&
    p[0] === "holders" &&
    typeof p[1] === "number" &&
    typeof p[3] === "number"
  ) {
    const number = s.holders[p[1]]?.credentials[p[3]]?.credentialNumber;
    const at = `holders[${p[1]}].credentials[${p[3]}]`;
    const message = `Credential number ${String(number)} is already used by ${at}; numbers are unique on a cloud node.`;
    for (const h of s.holders) {
      const j = h.credentials.findIndex(
        (c) => c.credentialNumber === number && (c.id === targetId || h.id === targetId),
      );
      const c = h.credentials[j];
      if (c === undefined || (h === s.holders[p[1]] && j === p[3])) continue;
      return {
        code: issue.code,
        path: c.id === targetId ? ["body", "credentialNumber"] : ["body", "credentials", j, "credentialNumber"],
        message,
      };
    }
  }
  return null;
}

/** Every issue re-pathed to the body where it concerns the written entity; other issues unchanged. */
export function toBodyPaths(issues: readonly Issue[], s: SystemSnapshot, targetId: string | undefined): Issue[] {
  if (targetId === undefined) return [...issues];
  return issues.map((i) => {
    const path = bodyPath(s, i.path, targetId);
    if (path !== i.path) return { ...i, path: [...path] };
    return otherParty(s, i, targetId) ?? i;
  });
}
