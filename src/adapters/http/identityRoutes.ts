// The identity routes of the accounts host (semantics I1–I9): the OAuth 2.0 endpoints
// (`/oauth2/token`, `/oauth2/auth`, `/oauth2/jwks`), permissions and invitations, system tokens,
// credential invitations and self-help. Each group registers itself here.
import type { Env, Hono } from "hono";
import { registerAuthorizePage } from "./authorizePage.js";
import { registerCredentialRoutes } from "./credentialRoutes.js";
import { registerOAuthRoutes } from "./oauthRoutes.js";
import { registerPermissionRoutes } from "./permissionRoutes.js";
import type { IdentityRouteDeps } from "./identityDeps.js";

export type { IdentityRouteDeps } from "./identityDeps.js";

/** Registers every identity route on the accounts app. */
export function registerIdentityRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  registerOAuthRoutes(app, deps);
  registerAuthorizePage(app, deps);
  registerPermissionRoutes(app, deps);
  registerCredentialRoutes(app, deps);
}
