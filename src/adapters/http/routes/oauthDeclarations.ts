// The declarations of the OAuth 2.0 endpoints, the login page and system tokens (to be written).
import type { DeclaredRoute } from "./declaredRoute.js";

/** The routes of the OAuth 2.0 endpoints, the login page and system tokens. */
export function oauthRouteDeclarations(): DeclaredRoute[] {
  return [];
}
