// The accounts host's routes of the token endpoint, the JWK Set and system tokens (to be written).
import type { Env, Hono } from "hono";
import type { IdentityRouteDeps } from "./identityRoutes.js";

/** Registers the routes of the token endpoint, the JWK Set and system tokens. */
export function registerOAuthRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  void app;
  void deps;
}
