// The accounts host's routes of permissions and invitations (to be written).
import type { Env, Hono } from "hono";
import type { IdentityRouteDeps } from "./identityDeps.js";

/** Registers the routes of permissions and invitations. */
export function registerPermissionRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  void app;
  void deps;
}
