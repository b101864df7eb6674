// Which declared routes each server serves: what its OpenAPI document holds.
import type { DeclaredRoute } from "./declaredRoute.js";
import { panelLiveRoutes, systemLiveRoutes } from "./liveRoutes.js";
import {
  engineRoutes,
  healthRoute,
  migrationRoutes,
  panelServiceRoutes,
  subscriptionRoutes,
  systemServiceRoutes,
} from "./serviceRoutes.js";

/**
 * The routes of `rsop serve --data`: a 2.0 system's (its table, the engine's, preview, reports) or a
 * 1.0 panel's, the webhook subscriptions when served, migration (served in front of the app on a
 * store that can keep one) and health.
 */
export function dataRouteDeclarations(kind: "system" | "panel", webhooks: "2.0" | "1.0" | undefined): DeclaredRoute[] {
  const own =
    kind === "system"
      ? [...systemLiveRoutes(), ...engineRoutes(false), ...systemServiceRoutes()]
      : [...panelLiveRoutes(), ...panelServiceRoutes()];
  return [...own, ...(webhooks !== undefined ? subscriptionRoutes(webhooks) : []), ...migrationRoutes(), healthRoute()];
}

/** The routes of `rsop serve --system`: the engine's and health. */
export function engineServerDeclarations(): DeclaredRoute[] {
  return [...engineRoutes(true), healthRoute()];
}
