// The declarations of credential invitations and self-help (semantics I80–I99), with the bodies
// credentialRoutes.ts checks: `POST /api/credentials/holders/invite`, `GET …/restrictions`,
// `POST …/restrictions/clear` and `POST …/reset` on the accounts host.
import { z } from "zod";
import {
  AUTH_ERRORS,
  COMMON_ERRORS,
  type DeclaredRoute,
  type HttpMethod,
  answersOf,
  paramsOf,
} from "./declaredRoute.js";

const ID = z.string().min(1, { error: "Must be a non-empty id." }).max(200);
/** The digital credential types an invitation names. */
const DIGITAL = z.array(z.enum(["touch", "token"])).min(1, { error: "Must name at least one credential type." });

/** The body of an invitation: `email` is required when `sendEmail` is true (its default). */
export const INVITE_BODY = z
  .object({
    systemId: ID,
    holderId: ID,
    credentialId: ID,
    types: DIGITAL.describe("Among the credential's types"),
    sendEmail: z.boolean().default(true).describe("Send the activation message to `email` (needs --smtp)"),
    email: z.email({ error: "Must be an e-mail address." }).max(254).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.sendEmail && b.email === undefined)
      ctx.addIssue({ code: "custom", path: ["email"], message: "Is required when sendEmail is true." });
  })
  .meta({ id: "CredentialInvite" });

/** The body of a self-help reset. */
export const RESET_BODY = z.object({ systemId: ID, holderId: ID, credentialId: ID }).meta({ id: "CredentialReset" });

/** The body of clearing restrictions: one credential's, or every one of the holder's. */
export const CLEAR_BODY = z
  .object({ systemId: ID, holderId: ID, credentialId: ID.optional() })
  .meta({ id: "RestrictionsClear" });

const RESTRICTION = z
  .object({ holderId: z.string(), systemId: z.string(), credentialId: z.string() })
  .meta({ id: "CredentialRestriction" });

const INVITE_ID = z
  .string()
  .describe("The invite id the credential's create answered, usable in an activation workflow");

interface Spec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly summary: string;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly ok: Readonly<Record<number, z.ZodType | null>>;
  readonly errors: readonly number[];
  readonly write: boolean;
}

function route(s: Spec): DeclaredRoute {
  return {
    id: `credentials.${s.method.toLowerCase()}${s.path.replace(/[/:{}_-]+(\w)/g, (_, c: string) => c.toUpperCase())}`,
    method: s.method,
    path: s.path,
    host: "accounts",
    summary: s.summary,
    tags: ["credentials"],
    params: paramsOf(s.path),
    ...(s.query !== undefined ? { query: s.query } : {}),
    ...(s.body !== undefined ? { body: s.body } : {}),
    answers: answersOf(s.ok, [...AUTH_ERRORS, ...COMMON_ERRORS, ...s.errors]),
    access: {
      roles: s.write ? ["admin", "integrator", "manager"] : ["admin", "integrator", "manager", "reporter"],
      scope: "partitions",
    },
    by: "credential",
  };
}

const BASE = "/api/credentials/holders";

/** The routes of credential invitations and self-help. */
export function credentialRouteDeclarations(): DeclaredRoute[] {
  const specs: Spec[] = [
    {
      method: "POST",
      path: `${BASE}/invite`,
      summary:
        "A digital credential's invite id, and with sendEmail its activation message to email (503 without --smtp, 502 when the SMTP server refuses it)",
      body: INVITE_BODY,
      ok: { 200: z.object({ inviteId: INVITE_ID }).meta({ id: "CredentialInvitation" }) },
      errors: [409, 502],
      write: true,
    },
    {
      method: "GET",
      path: `${BASE}/restrictions`,
      summary: "The holder's self-help restrictions in force (this month's, not cleared)",
      query: z.object({
        systemId: z.string().describe("Required"),
        holderId: z.string().describe("Required"),
      }),
      ok: { 200: z.array(RESTRICTION) },
      errors: [],
      write: false,
    },
    {
      method: "POST",
      path: `${BASE}/restrictions/clear`,
      summary: "Clear the holder's restrictions (one credential's, or all): self-help resets are allowed again",
      body: CLEAR_BODY,
      ok: { 204: null },
      errors: [],
      write: true,
    },
    {
      method: "POST",
      path: `${BASE}/reset`,
      summary:
        "A self-help reset of a digital credential: allowed credentialResetsPerMonth times (default 1) per holder and UTC month, then 429 and a restriction until the month ends or it is cleared",
      body: RESET_BODY,
      ok: {
        200: z
          .object({
            inviteId: INVITE_ID,
            resetsRemaining: z.number().int().describe("Self-help resets the holder has left this month"),
          })
          .meta({ id: "CredentialResetDone" }),
      },
      errors: [409, 429],
      write: true,
    },
  ];
  return specs.map(route);
}
