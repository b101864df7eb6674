// The accounts host's routes of credential invitations and self-help (semantics I80–I99), as
// credentialDeclarations.ts declares them: `POST /api/credentials/holders/invite`,
// `GET …/restrictions`, `POST …/restrictions/clear` and `POST …/reset`. Checks, in this order: the
// token (401), the method (405), the query keys (400), the body (415, 413, 400 when not JSON); then
// the system (404 at `body.systemId` / `query.systemId`, the same for an unknown one and one out of
// the caller's reach) and the role on its organization (403: a reporter only reads); then the fields
// (400 at `body.<field>`), the holder (404, also outside a manager's partitions), the credential
// (404 unknown, 409 a card) and its types (400); then the state (403, 429, 503, 502). The system id
// is in the body, so the body is read before the reach is known, and a body naming none is a 400
// (I82).
import type { Context, Env, Hono } from "hono";
import type { z } from "zod";
import type { SystemSnapshot } from "../../model/types.js";
import { escapeHtml } from "../../reports/index.js";
import { type Grant, grantAt } from "../../service/auth/grant.js";
import { HttpError, jsonResponse } from "../../service/httpError.js";
import { serviceSecret } from "../../service/identity/secret.js";
import {
  clearRestrictions,
  inviteIdOf,
  recordReset,
  resetsPerMonth,
  restrictionsOf,
} from "../../service/identity/selfHelp.js";
import type { OrganizationRow, TenantRow } from "../../service/store/registryStore.js";
import { flagsOf, parseObjectBody } from "../../service/tenants/organization.js";
import type { IdentityRouteDeps } from "./identityDeps.js";
import { refuseOtherQuery } from "./parseQuery.js";
import { readJsonBody } from "./readJsonBody.js";
import { CLEAR_BODY, INVITE_BODY, RESET_BODY } from "./routes/credentialDeclarations.js";
import { allow } from "./dataPipeline.js";

const BASE = "/api/credentials/holders";

/** A system the caller reaches, with the caller's grant on it. */
interface Target {
  readonly tenant: TenantRow;
  readonly org: OrganizationRow;
  readonly at: Grant;
}

/** What a route needs of a holder, copied out of the snapshot. */
interface HolderFacts {
  readonly id: string;
  readonly firstName: string;
  readonly credentials: readonly { readonly id: string; readonly types: readonly string[] }[];
  /** The system's self-help resets per month (I85). */
  readonly limit: number;
}

/** The holder if `at` sees it: admin and integrator every one, a manager or reporter those of its partitions (H18). */
function holderIn(snapshot: SystemSnapshot, at: Grant, holderId: string): HolderFacts | null {
  const h = snapshot.holders.find((x) => x.id === holderId);
  if (h === undefined) return null;
  if (at.partitions !== null) {
    const effective = h.partition ?? snapshot.partitions.find((p) => p.default === true)?.id ?? null;
    if (effective === null || !at.partitions.has(effective)) return null;
  }
  return {
    id: h.id,
    firstName: h.firstName,
    credentials: h.credentials.map((c) => ({ id: c.id, types: [...c.types] })),
    limit: resetsPerMonth(snapshot),
  };
}

/** What the handlers share. */
function routesOf(deps: IdentityRouteDeps) {
  const { registry } = deps;
  const ancestorsOf = (id: string) => registry.ancestors(id);

  /** Token (401), then a fresh registry, the method (405) and the query keys (400). */
  async function admit(c: Context, methods: readonly string[], query: readonly string[] = []): Promise<Grant> {
    const caller = await deps.identify(c);
    await registry.refresh();
    allow(c.req.method, methods);
    refuseOtherQuery(new URL(c.req.url), query);
    return caller.grant;
  }

  /** The system `systemId` if `grant` reaches it (404 at `path` otherwise, the same as an unknown one). */
  function reach(grant: Grant, systemId: string, path: string, write: boolean): Target {
    const tenant = registry.tenantByKey(systemId);
    const org = tenant === undefined ? undefined : registry.organization(tenant.organization);
    const at =
      tenant !== undefined && org !== undefined && tenant.kind === "system" && tenant.state === "active"
        ? grantAt(grant, tenant.organization, ancestorsOf, tenant.key)
        : null;
    if (tenant === undefined || org === undefined || at === null)
      throw new HttpError(404, "Unknown system id.", [{ path, message: `Unknown system id "${systemId}".` }]);
    if (write && at.role === "reporter")
      throw new HttpError(403, "A reporter may read credential restrictions, not invite, reset or clear.");
    return { tenant, org, at };
  }

  /** The body (415, 413, 400), the system it names when it names one (404, 403), then its fields (400). */
  async function bodyOf<S extends z.ZodType>(
    c: Context,
    grant: Grant,
    schema: S,
    known: readonly string[],
  ): Promise<{ body: z.output<S>; target: Target }> {
    const raw = await readJsonBody(c.req.raw, deps.maxBodyBytes);
    const named = (raw as { systemId?: unknown } | null)?.systemId;
    const early = typeof named === "string" && named !== "" ? reach(grant, named, "body.systemId", true) : undefined;
    const body = parseObjectBody(schema, known, raw) as z.output<S> & { systemId: string };
    return { body, target: early ?? reach(grant, body.systemId, "body.systemId", true) };
  }

  /** The holder (404 at `path` when unknown or outside the caller's partitions). */
  async function holder(t: Target, holderId: string, path: string): Promise<HolderFacts> {
    const found = await deps.readSystem(t.tenant, (snapshot) => holderIn(snapshot, t.at, holderId));
    if (found === null)
      throw new HttpError(404, "Unknown holder.", [{ path, message: `Unknown holder "${holderId}".` }]);
    return found;
  }

  /** A digital credential of the holder (404 unknown, 409 a card). */
  function digital(h: HolderFacts, credentialId: string): { id: string; types: readonly string[] } {
    const found = h.credentials.find((x) => x.id === credentialId);
    const path = "body.credentialId";
    if (found === undefined)
      throw new HttpError(404, "Unknown credential.", [
        { path, message: `Holder "${h.id}" has no credential "${credentialId}".` },
      ]);
    if (found.types.includes("card"))
      throw new HttpError(409, "A card credential is not invited or reset; only a digital one is.", [
        { path, message: `Credential "${credentialId}" is a card credential.` },
      ]);
    return found;
  }

  const inviteOf = async (t: Target, holderId: string, credentialId: string) =>
    inviteIdOf(await serviceSecret(registry), t.tenant.key, holderId, credentialId);

  return { admit, reach, bodyOf, holder, digital, inviteOf };
}

type Routes = ReturnType<typeof routesOf>;

/** Sends the activation message (I83): 503 without a mailer, 502 when the SMTP server refuses it. */
async function sendActivation(
  deps: IdentityRouteDeps,
  c: Context,
  m: { org: OrganizationRow; holder: HolderFacts; email: string; inviteId: string },
): Promise<void> {
  if (deps.mailer === undefined)
    throw new HttpError(
      503,
      "This service sends no e-mail: start it with --smtp URL, or ask with sendEmail false and deliver the invite id yourself.",
      [{ path: "body.sendEmail", message: "No SMTP server is configured (--smtp)." }],
    );
  const link = `${deps.publicUrl(c)}/activate?invite=${encodeURIComponent(m.inviteId)}`;
  // A header holds one line: a name with a line break must not add headers.
  const orgName = m.org.name.replace(/[\r\n]+/g, " ");
  const text = [
    `Hello ${m.holder.firstName},`,
    "",
    `${orgName} has given you a mobile credential. Open this link on your phone to activate it:`,
    "",
    link,
    "",
    "If you did not expect this message, ignore it.",
  ].join("\n");
  const html = `<p>Hello ${escapeHtml(m.holder.firstName)},</p><p>${escapeHtml(orgName)} has given you a mobile credential. Open this link on your phone to activate it:</p><p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>If you did not expect this message, ignore it.</p>`;
  try {
    await deps.mailer.send({ to: m.email, subject: `${orgName}: activate your mobile credential`, text, html });
  } catch (e) {
    // The error's code only: a message may quote the server's answer, the log needs no address.
    const code = (e as { code?: unknown })?.code;
    deps.log(`sending an activation message failed${typeof code === "string" ? `: ${code}` : ""}`);
    throw new HttpError(502, "The SMTP server did not take the activation message; try again later.");
  }
}

function inviteRoute<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps, r: Routes): void {
  app.all(`${BASE}/invite`, async (c) => {
    const grant = await r.admit(c, ["POST"]);
    const known = ["systemId", "holderId", "credentialId", "types", "sendEmail", "email"];
    const { body, target } = await r.bodyOf(c, grant, INVITE_BODY, known);
    const holder = await r.holder(target, body.holderId, "body.holderId");
    const credential = r.digital(holder, body.credentialId);
    const missing = body.types.filter((t) => !credential.types.includes(t));
    if (missing.length > 0)
      throw new HttpError(400, "The request body is invalid.", [
        { path: "body.types", message: `Credential "${credential.id}" is not of type ${missing.join(", ")}.` },
      ]);
    const inviteId = await r.inviteOf(target, holder.id, credential.id);
    if (body.sendEmail) await sendActivation(deps, c, { org: target.org, holder, email: body.email!, inviteId });
    return jsonResponse(200, { inviteId }, deps.indent);
  });
}

function restrictionRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps, r: Routes): void {
  app.all(`${BASE}/restrictions`, async (c) => {
    const grant = await r.admit(c, ["GET"], ["systemId", "holderId"]);
    const query = new URL(c.req.url).searchParams;
    const required = (key: string): string => {
      const v = query.get(key);
      if (v === null || v === "")
        throw new HttpError(400, "Invalid query parameters.", [{ path: `query.${key}`, message: "Is required." }]);
      return v;
    };
    const target = r.reach(grant, required("systemId"), "query.systemId", false);
    const holder = await r.holder(target, required("holderId"), "query.holderId");
    return jsonResponse(200, restrictionsOf(deps.registry, target.tenant.key, holder.id, deps.now()), deps.indent);
  });
  app.all(`${BASE}/restrictions/clear`, async (c) => {
    const grant = await r.admit(c, ["POST"]);
    const { body, target } = await r.bodyOf(c, grant, CLEAR_BODY, ["systemId", "holderId", "credentialId"]);
    const holder = await r.holder(target, body.holderId, "body.holderId");
    const now = deps.now();
    const id = body.credentialId;
    const restricted = restrictionsOf(deps.registry, target.tenant.key, holder.id, now).map((x) => x.credentialId);
    // A credential deleted since its restriction may still be cleared.
    if (id !== undefined && !restricted.includes(id) && !holder.credentials.some((x) => x.id === id))
      throw new HttpError(404, "Unknown credential.", [
        { path: "body.credentialId", message: `Holder "${holder.id}" has no credential "${id}".` },
      ]);
    await clearRestrictions(deps.registry, {
      systemId: target.tenant.key,
      holderId: holder.id,
      ...(id !== undefined ? { credentialId: id } : {}),
      now,
    });
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  });
}

function resetRoute<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps, r: Routes): void {
  app.all(`${BASE}/reset`, async (c) => {
    const grant = await r.admit(c, ["POST"]);
    const { body, target } = await r.bodyOf(c, grant, RESET_BODY, ["systemId", "holderId", "credentialId"]);
    if (!flagsOf(target.org).allowCredentialResets)
      throw new HttpError(403, "This organization does not allow credential resets (allowCredentialResets is false).");
    const holder = await r.holder(target, body.holderId, "body.holderId");
    const credential = r.digital(holder, body.credentialId);
    const outcome = await recordReset(deps.registry, {
      systemId: target.tenant.key,
      holderId: holder.id,
      credentialId: credential.id,
      limit: holder.limit,
      now: deps.now(),
    });
    if (!outcome.allowed)
      throw new HttpError(
        429,
        `The holder has used the self-help resets of this month (${holder.limit}); the credential is restricted until the month ends or an administrator clears it.`,
        [{ path: "body.credentialId", message: `Credential "${credential.id}" is restricted.` }],
        { "retry-after": String(outcome.retryAfter) },
      );
    // Counted first (the limit is what protects the holder), then the credential is pending again,
    // so that the holder activates it on the new device (I85).
    const path = `/holders/${encodeURIComponent(holder.id)}/credentials/${encodeURIComponent(credential.id)}/reset`;
    await deps.writeSystem(target.tenant, { method: "POST", path });
    const inviteId = await r.inviteOf(target, holder.id, credential.id);
    return jsonResponse(200, { inviteId, resetsRemaining: outcome.remaining }, deps.indent);
  });
}

/** Registers the routes of credential invitations and self-help on the accounts app. */
export function registerCredentialRoutes<E extends Env>(app: Hono<E>, deps: IdentityRouteDeps): void {
  const r = routesOf(deps);
  inviteRoute(app, deps, r);
  restrictionRoutes(app, deps, r);
  resetRoute(app, deps, r);
}
