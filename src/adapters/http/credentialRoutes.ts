// The accounts host's routes of credential invitations and self-help (to be written).
import type { Env, Hono } from "hono";
import type { IdentityRouteDeps } from "./identityRoutes.js";

/** Registers the routes of credential invitations and self-help. */
export function registerCredentialRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  void app;
  void deps;
}
