// Issues of the resulting snapshot that concern the entity an operation wrote are reported at the
// request body (`body.groups.0`), not at a snapshot index the client never saw (`holders.3.groups.0`).
import type { Issue, SystemSnapshot } from "../../model/index.js";

type Path = readonly (string | number)[];

function idAt(s: SystemSnapshot, coll: string | number, i: string | number): string | undefined {
  const list = (s as unknown as Record<string, unknown>)[coll];
  if (!Array.isArray(list) || typeof i !== "number") return undefined;
  const el = list[i] as { id?: unknown } | undefined;
  return typeof el?.id === "string" ? el.id : undefined;
}

/** `path` under `body` when it points into the entity `targetId` (top-level, or a holder's credential). */
export function bodyPath(s: SystemSnapshot, path: Path, targetId: string): Path {
  const [coll, i] = path;
  if (coll === undefined || i === undefined) return path;
  if (idAt(s, coll, i) === targetId) {
    // A device's node comes from the route; what the body chose wrongly is the connection.
    if (coll === "devices" && path[2] === "cloudNode" && path.length === 3) return ["body", "connection"];
    return ["body", ...path.slice(2)];
  }
  if (coll === "holders" && path[2] === "credentials" && typeof i === "number" && typeof path[3] === "number")
    if (s.holders[i]?.credentials[path[3]]?.id === targetId) return ["body", ...path.slice(4)];
  return path;
}

/** Every issue re-pathed by bodyPath; messages are kept (they name the other party of a conflict). */
export function toBodyPaths(issues: readonly Issue[], s: SystemSnapshot, targetId: string | undefined): Issue[] {
  if (targetId === undefined) return [...issues];
  return issues.map((i) => ({ ...i, path: [...bodyPath(s, i.path, targetId)] }));
}
