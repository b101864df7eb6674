// Credentials of a holder (the 2.0 systems API "Credentials") and activation of a pending digital one.
import { z } from "zod";
import { type Issue, credentialSchema, normalizeCredential } from "../../model/index.js";
import { DECLINED, fastCredential } from "../../model/fastParse.js";
import { objectBody, parseBody, reportBody, requireKeys } from "../body.js";
import { refuse } from "../operation.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, onlyKeys, positionIn } from "./common.js";

const DIGITAL_TYPES = z.array(z.enum(["touch", "token"])).min(1, { error: "Must name at least one credential type." });

function holderAt(ctx: WriteContext) {
  return ctx.draft.holders[indexOf(ctx, "holders", ctx.params.holderId!, "holder")]!;
}

type Path = readonly (string | number)[];

/**
 * The create rules of the 2.0 systems API for one credential body at `prefix` (`body`, or
 * `body.credentials.<j>` inside a holder create): `types` required; a card needs its number and takes
 * no `sendEmail`; a digital credential takes no number, facility code or description.
 */
export function credentialIssues(b: Record<string, unknown>, prefix: Path): Issue[] {
  const issues: Issue[] = [];
  if (!Object.hasOwn(b, "types")) return [{ code: "required", path: [...prefix, "types"], message: "Is required." }];
  const card = Array.isArray(b.types) && b.types.includes("card");
  if (card && !Object.hasOwn(b, "credentialNumber"))
    issues.push({
      code: "required",
      path: [...prefix, "credentialNumber"],
      message: "A card credential needs a credentialNumber.",
    });
  if (!card) {
    for (const k of ["credentialNumber", "facilityCode", "description"])
      if (Object.hasOwn(b, k) && b[k] !== null)
        issues.push({
          code: "invalid",
          path: [...prefix, k],
          message: `Only card credentials carry a ${k}; a digital credential gets its number when it is activated.`,
        });
  } else if (Object.hasOwn(b, "sendEmail"))
    issues.push({
      code: "invalid",
      path: [...prefix, "sendEmail"],
      message: "sendEmail is for digital credentials only.",
    });
  if (Object.hasOwn(b, "sendEmail") && typeof b.sendEmail !== "boolean")
    issues.push({ code: "invalidType", path: [...prefix, "sendEmail"], message: "Must be a boolean." });
  return issues;
}

/** The stored form of a checked credential body: a digital one starts `Pending` with no number (the 2.0 systems API). */
export function credentialInput(b: Record<string, unknown>, id: string): Record<string, unknown> {
  const card = Array.isArray(b.types) && b.types.includes("card");
  return {
    id,
    types: b.types,
    credentialNumber: card ? b.credentialNumber : null,
    facilityCode: card ? b.facilityCode : null,
    description: card ? b.description : "Pending",
  };
}

export function createCredential(ctx: WriteContext): Created {
  // The holder is read from the plain base and replaced whole: no draft of it and its credentials.
  const i = indexOf(ctx, "holders", ctx.params.holderId!, "holder");
  const h = ctx.base.holders[i]!;
  const b = objectBody(ctx.body);
  onlyKeys(b, ["types", "credentialNumber", "facilityCode", "description", "sendEmail"]);
  requireKeys(b, ["types"]);
  // Collected with the other problems of the body (HS6): the credential schema still checks the rest.
  reportBody(credentialIssues(b, ["body"]));
  const id = ctx.newId();
  const input = credentialInput(b, id);
  // A plainly valid one through the loader's fast path (the same result, S19), else the schema.
  const fast = fastCredential(input, h.id);
  const c = fast === DECLINED ? parseBody(credentialSchema, input) : (fast as z.output<typeof credentialSchema>);
  ctx.draft.holders[i] = { ...h, credentials: [...h.credentials, normalizeCredential(c, h.id)] };
  return { status: 201, id };
}

function credentialIndex(ctx: WriteContext): number {
  return positionIn(holderAt(ctx).credentials, ctx.params.credentialId!, "credential of this holder");
}

export function updateCredential(ctx: WriteContext): Created {
  const h = holderAt(ctx);
  const c = h.credentials[credentialIndex(ctx)]!;
  const b = objectBody(ctx.body);
  onlyKeys(b, ["types"], {
    credentialNumber: "Only the types of a credential change after creation.",
    facilityCode: "Only the types of a credential change after creation.",
    description: "Only the types of a credential change after creation.",
  });
  requireKeys(b, ["types"]);
  if (c.types.includes("card"))
    refuse(400, "invalid", ["body", "types"], "Only the types of a digital credential can change after creation.");
  c.types = parseBody(DIGITAL_TYPES, b.types, ["body", "types"]);
  return NO_CONTENT;
}

export function deleteCredential(ctx: WriteContext): Created {
  holderAt(ctx).credentials.splice(credentialIndex(ctx), 1);
  return NO_CONTENT;
}

const activation = z.object({
  credentialNumber: credentialSchema.shape.credentialNumber.unwrap().unwrap(),
  description: z.string().min(1).max(255),
});

/** A pending digital credential gets its number and the activating device's model name (the 2.0 systems API). */
export function activateCredential(ctx: WriteContext): Created {
  const c = holderAt(ctx).credentials[credentialIndex(ctx)]!;
  if (c.types.includes("card"))
    refuse(409, "conflict", [], "Card credentials are not activated; only pending digital credentials are.");
  if (c.credentialNumber !== null) refuse(409, "conflict", [], `Credential "${c.id}" is already active.`);
  const b = objectBody(ctx.body);
  onlyKeys(b, ["credentialNumber", "description"]);
  const a = parseBody(activation, b);
  c.credentialNumber = a.credentialNumber;
  c.description = a.description;
  return NO_CONTENT;
}

/**
 * A digital credential back to pending (the self-help reset, I85): its number and device are
 * forgotten, so that the holder activates it again on a new device. Already pending: nothing changes.
 */
export function resetCredential(ctx: WriteContext): Created {
  const c = holderAt(ctx).credentials[credentialIndex(ctx)]!;
  if (c.types.includes("card"))
    refuse(409, "conflict", [], "Card credentials are not reset; only digital credentials are.");
  onlyKeys(objectBody(ctx.body ?? {}), []);
  c.credentialNumber = null;
  c.description = "Pending";
  return NO_CONTENT;
}
