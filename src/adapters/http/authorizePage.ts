// The accounts host's routes of the login and consent page (to be written).
import type { Env, Hono } from "hono";
import type { IdentityRouteDeps } from "./identityRoutes.js";

/** Registers the routes of the login and consent page. */
export function registerAuthorizePage<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  void app;
  void deps;
}
