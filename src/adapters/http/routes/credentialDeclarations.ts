// The declarations of credential invitations and self-help (to be written).
import type { DeclaredRoute } from "./declaredRoute.js";

/** The routes of credential invitations and self-help. */
export function credentialRouteDeclarations(): DeclaredRoute[] {
  return [];
}
