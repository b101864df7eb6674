// The identity routes of the accounts host, as declared (semantics I1–I9).
import { authorizeRouteDeclarations } from "./authorizeDeclarations.js";
import { credentialRouteDeclarations } from "./credentialDeclarations.js";
import type { DeclaredRoute } from "./declaredRoute.js";
import { oauthRouteDeclarations } from "./oauthDeclarations.js";
import { permissionRouteDeclarations } from "./permissionDeclarations.js";

/** Every identity route. */
export function identityRouteDeclarations(): DeclaredRoute[] {
  return [
    ...oauthRouteDeclarations(),
    ...authorizeRouteDeclarations(),
    ...permissionRouteDeclarations(),
    ...credentialRouteDeclarations(),
  ];
}
