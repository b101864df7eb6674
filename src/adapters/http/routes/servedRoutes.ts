// Which declared routes each server serves: what its OpenAPI document holds.
import { identityRouteDeclarations } from "./identityDeclarations.js";
import { z } from "zod";
import { accountsRouteDeclarations } from "./accountsDeclarations.js";
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

/** A 1.0 panel's route as the service serves it on any host: below `/panels/{serial}` (T50). */
function onPanelPath(r: DeclaredRoute): DeclaredRoute {
  return {
    ...r,
    id: r.id.startsWith("panel") ? r.id : `panel${r.id[0]!.toUpperCase()}${r.id.slice(1)}`,
    path: `/panels/:serial${r.path}`,
    params: r.params.extend({ serial: z.string().meta({ description: "The panel's serial number" }) }),
  };
}

/**
 * The routes of the service (`rsop serve --data FILE.db` holding organizations): the accounts host's
 * (organizations, panels, both generations' subscriptions), every system's below `/{system_id}`,
 * every panel's below `/panels/{serial}` (also at `/api/…` on the host `{serial}.<domain>`), health.
 */
export function serviceRouteDeclarations(extra: readonly DeclaredRoute[] = []): DeclaredRoute[] {
  return [
    ...accountsRouteDeclarations(),
    ...identityRouteDeclarations(),
    ...subscriptionRoutes("2.0"),
    ...subscriptionRoutes("1.0"),
    ...extra,
    ...systemLiveRoutes(),
    ...engineRoutes(false),
    ...systemServiceRoutes(),
    ...[...panelLiveRoutes(), ...panelServiceRoutes()].map(onPanelPath),
    healthRoute(),
  ];
}
