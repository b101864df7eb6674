// The tokens file of `rsop serve --data --tokens FILE`: bearer tokens with a role and, for managers
// and reporters, the partitions they may see (the accounts API, the 2.0 systems API "Partitions"; semantics H17);
// in a service, the organizations where the role holds and the person the token stands for (T10).
// Tokens are compared in constant time and never appear in a message.
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { isBearerToken } from "./bearerToken.js";
import { type Grant, ROLES, type Role } from "./grant.js";

export { ADMIN, type Grant, type GrantUser, ROLES, type Role, reaches } from "./grant.js";

/** Shortest token the file accepts: as `rsop serve --token` (H1). */
export const MIN_FILE_TOKEN_LENGTH = 16;

/** One problem of a tokens file: where (`#2.partitions.0`, entries counted from 1 in file order, never the token) and what. */
export interface TokensIssue {
  readonly path: string;
  readonly message: string;
}

/** A tokens file that cannot be used: every problem, each with its path. */
export class TokensFileError extends Error {
  override readonly name = "TokensFileError";
  constructor(
    readonly file: string,
    readonly issues: readonly TokensIssue[],
  ) {
    super(`${file}: ${issues.length} problem${issues.length === 1 ? "" : "s"}`);
  }
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/**
 * Whether two strings are equal, in a time that depends on neither their content nor their lengths:
 * both are hashed to 32 bytes first, then compared by `crypto.timingSafeEqual`.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** A token and what it may do. */
export interface TokenEntry {
  readonly token: string;
  readonly grant: Grant;
}

/**
 * The lookup of a presented token among `entries`: every entry is compared, in constant time, whether
 * or not one already matched, so the time says nothing about which token (or how much of it) is right.
 * @returns the grant, or null for a token no entry has.
 */
export function grantLookup(entries: readonly TokenEntry[]): (presented: string) => Grant | null {
  const table = entries.map((e) => ({ digest: digest(e.token), grant: e.grant }));
  return (presented) => {
    const d = digest(presented);
    let found: Grant | null = null;
    for (const e of table) if (timingSafeEqual(d, e.digest) && found === null) found = e.grant;
    return found;
  };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

const ENTRY_KEYS = ["role", "partitions", "organizations", "user"];

/** The problems of an entry's `organizations` (T10): a non-empty array of organization ids. */
function organizationIssues(at: string, o: unknown, issues: TokensIssue[]): void {
  if (o === undefined) return;
  if (!Array.isArray(o)) {
    issues.push({ path: `${at}.organizations`, message: "Must be an array of organization ids." });
    return;
  }
  if (o.length === 0)
    issues.push({
      path: `${at}.organizations`,
      message: "Names no organization: leave it out to reach every organization.",
    });
  o.forEach((x, j) => {
    if (typeof x !== "string" || x === "")
      issues.push({ path: `${at}.organizations.${j}`, message: "Must be an organization id (a non-empty string)." });
  });
}

/** The problems of an entry's `user` (T10): `{id, firstName, lastName, email?}`, strings (email may be null). */
function userIssues(at: string, u: unknown, issues: TokensIssue[]): void {
  if (u === undefined) return;
  if (!isObject(u)) {
    issues.push({ path: `${at}.user`, message: 'Must be an object {"id", "firstName", "lastName", "email"}.' });
    return;
  }
  for (const k of Object.keys(u))
    if (!["id", "firstName", "lastName", "email"].includes(k))
      issues.push({
        path: `${at}.user.${k}`,
        message: 'Unknown field: use "id", "firstName", "lastName" and "email".',
      });
  if (typeof u.id !== "string" || u.id === "")
    issues.push({ path: `${at}.user.id`, message: "Must be the user's id (a non-empty string)." });
  for (const k of ["firstName", "lastName"])
    if (typeof u[k] !== "string") issues.push({ path: `${at}.user.${k}`, message: "Must be a string." });
  if (u.email !== undefined && u.email !== null && typeof u.email !== "string")
    issues.push({ path: `${at}.user.email`, message: "Must be a string or null." });
}

/** The problems of an entry's `partitions`, given its role. */
function partitionIssues(at: string, role: unknown, p: unknown, issues: TokensIssue[]): void {
  const scoped = role === "manager" || role === "reporter";
  if (p !== undefined && !scoped && ROLES.includes(role as Role))
    issues.push({
      path: `${at}.partitions`,
      message: `A ${String(role)} reaches every partition: give partitions only to a manager or a reporter.`,
    });
  if (scoped && p === undefined)
    issues.push({
      path: `${at}.partitions`,
      message: `Is required for a ${role}: the ids of the partitions it may see.`,
    });
  if (p !== undefined && !Array.isArray(p))
    issues.push({ path: `${at}.partitions`, message: "Must be an array of partition ids." });
  if (Array.isArray(p)) {
    if (scoped && p.length === 0)
      issues.push({
        path: `${at}.partitions`,
        message: "Names no partition: a manager or reporter needs at least one.",
      });
    p.forEach((x, j) => {
      if (typeof x !== "string" || x === "")
        issues.push({ path: `${at}.partitions.${j}`, message: "Must be a partition id (a non-empty string)." });
    });
  }
}

/** The grant of an entry already checked. */
function grantOf(v: Record<string, unknown>): Grant {
  const role = v.role as Role;
  const scoped = role === "manager" || role === "reporter";
  const u = v.user as Record<string, unknown> | undefined;
  return Object.freeze({
    role,
    partitions: scoped ? new Set(v.partitions as string[]) : null,
    ...(v.organizations !== undefined ? { organizations: new Set(v.organizations as string[]) } : {}),
    ...(u !== undefined
      ? {
          user: Object.freeze({
            id: u.id as string,
            firstName: u.firstName as string,
            lastName: u.lastName as string,
            email: (u.email as string | null | undefined) ?? null,
          }),
        }
      : {}),
  });
}

/**
 * Checks the JSON of a tokens file: an object mapping each token to `{role, partitions?,
 * organizations?, user?}`. Problems are named by the entry's place in the file (`#1` is the first),
 * never by the token.
 * @returns the entries, or every problem.
 */
export function parseTokens(json: unknown): { ok: true; entries: TokenEntry[] } | { ok: false; issues: TokensIssue[] } {
  const issues: TokensIssue[] = [];
  if (!isObject(json))
    return {
      ok: false,
      issues: [{ path: "", message: 'Must be a JSON object mapping each token to {"role", "partitions"}.' }],
    };
  const entries: TokenEntry[] = [];
  const tokens = Object.keys(json);
  if (tokens.length === 0) issues.push({ path: "", message: "Names no token: add at least one." });
  tokens.forEach((token, i) => {
    const at = `#${i + 1}`;
    const before = issues.length;
    if (!isBearerToken(token))
      issues.push({
        path: at,
        message:
          "The token may hold only letters, digits and -._~+/ (then = padding): clients could not send it as a Bearer token.",
      });
    else if (token.length < MIN_FILE_TOKEN_LENGTH)
      issues.push({
        path: at,
        message: `The token has ${token.length} characters; use at least ${MIN_FILE_TOKEN_LENGTH} (e.g. openssl rand -hex 24).`,
      });
    const v = json[token];
    if (!isObject(v)) {
      issues.push({ path: at, message: 'Must be an object {"role", "partitions"}.' });
      return;
    }
    for (const k of Object.keys(v))
      if (!ENTRY_KEYS.includes(k))
        issues.push({
          path: `${at}.${k}`,
          message: 'Unknown field: use "role", "partitions", "organizations" and "user".',
        });
    if (!ROLES.includes(v.role as Role))
      issues.push({ path: `${at}.role`, message: `Must be one of ${ROLES.join(", ")}.` });
    partitionIssues(at, v.role, v.partitions, issues);
    organizationIssues(at, v.organizations, issues);
    userIssues(at, v.user, issues);
    if (issues.length === before) entries.push({ token, grant: grantOf(v) });
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, entries };
}

/**
 * Reads and checks a tokens file.
 * @throws TokensFileError with every problem (unreadable, not JSON, invalid entries).
 */
export async function readTokensFile(file: string): Promise<TokenEntry[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new TokensFileError(file, [
      { path: "", message: `Cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}.` },
    ]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    // The message of JSON.parse may quote the text, and the text holds tokens: only its position is kept.
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    throw new TokensFileError(file, [
      { path: "", message: `Is not valid JSON${at !== undefined ? ` (at character ${at})` : ""}.` },
    ]);
  }
  const r = parseTokens(json);
  if (!r.ok) throw new TokensFileError(file, r.issues);
  return r.entries;
}
