// What the identity routes of the accounts host need (semantics I1–I9), apart from their
// registration (identityRoutes.ts), so that the route files import it without a cycle.
import type { Context } from "hono";
import type { Operation } from "../../live/operation.js";
import type { SystemSnapshot } from "../../model/types.js";
import type { Mailer } from "../../service/identity/mailer.js";
import type { TokenKeys } from "../../service/identity/tokenKeys.js";
import type { TenantRow } from "../../service/store/registryStore.js";
import type { Caller } from "../../service/tenants/organization.js";
import type { TenantRegistry } from "../../service/tenants/registry.js";

/** What the identity routes need. */
export interface IdentityRouteDeps {
  readonly registry: TenantRegistry;
  /** The caller of a request (HttpError 401 without a valid token). */
  readonly identify: (c: Context) => Promise<Caller>;
  readonly keys: TokenKeys;
  /** The clock of tokens, codes and self-help months (tests inject one). */
  readonly now: () => number;
  /** The accounts host's public address (`--public-url`, else the request's origin): tokens' `iss`, links. */
  readonly publicUrl: (c: Context) => string;
  /**
   * Reads a 2.0 system's current snapshot (the tenant loaded for the call): what credential
   * invitations and self-help check holders and credentials against.
   */
  readonly readSystem: <T>(tenant: TenantRow, read: (current: SystemSnapshot) => T) => Promise<T>;
  /**
   * Applies one write to a 2.0 system (the tenant loaded for the call), as its systems host would:
   * durable, with its webhook events; a staged or migrating system refuses (409). Answers the status,
   * or throws HttpError with the write's refusal.
   */
  readonly writeSystem: (tenant: TenantRow, operation: Operation) => Promise<number>;
  /** Sends activation messages; absent without `--smtp`. */
  readonly mailer?: Mailer;
  readonly indent: number;
  readonly maxBodyBytes: number;
  readonly log: (line: string) => void;
}
