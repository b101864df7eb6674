// The declarations of the login and consent page (to be written).
import type { DeclaredRoute } from "./declaredRoute.js";

/** The routes of the login and consent page. */
export function authorizeRouteDeclarations(): DeclaredRoute[] {
  return [];
}
