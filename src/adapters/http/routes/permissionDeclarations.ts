// The declarations of permissions and invitations (to be written).
import type { DeclaredRoute } from "./declaredRoute.js";

/** The routes of permissions and invitations. */
export function permissionRouteDeclarations(): DeclaredRoute[] {
  return [];
}
