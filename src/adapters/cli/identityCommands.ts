// `rsop users add`, `rsop apps add` and `rsop keys rotate` (semantics I50–I53): the operator's way to
// make the first users and applications of a service database, each with a permission, and to
// rotate its signing keys. They open the database themselves, so never while a server uses it
// (SQLite is opened exclusively: the error says so). A password is read from stdin, never from an
// argument (the process list would show it); a client secret is printed once and never stored.
import { type Command, Option } from "commander";
import type { Role } from "../../service/auth/grant.js";
import { HttpError } from "../../service/httpError.js";
import { callerByEmail, createApp, createUser, normalEmail } from "../../service/identity/accounts.js";
import { createPermission, permissionAnswer, permissionsOn } from "../../service/identity/permissions.js";
import { rotateKeys } from "../../service/identity/signingKeys.js";
import { StoreError } from "../../service/store/store.js";
import type { Caller } from "../../service/tenants/organization.js";
import { TenantRegistry } from "../../service/tenants/registry.js";
import { openPostgresSpace, redactUrl } from "../store/postgresStore.js";
import { openSqliteSpace } from "../store/sqliteStore.js";
import { CliError, type CliIo, UsageError, readAll } from "./io.js";

const ROLES: readonly Role[] = ["admin", "integrator", "manager", "reporter"];

/** The caller of the CLI's changes: the operator, with the database in hand (no user, no address). */
const OPERATOR: Caller = {
  grant: { role: "admin", partitions: null },
  clientInfo: { ipAddress: null, userAgent: null },
};

/** Where each issue of the service's checks comes from on the command line. */
const OPTION_OF: Readonly<Record<string, string>> = {
  email: "--email",
  "body.email": "--email",
  password: "password (stdin)",
  name: "--name",
  "body.name": "--name",
  "body.role": "--role",
  organization_id: "--organization",
};

/**
 * An HttpError of the service as the CLI's error: every problem with the option it is about. A
 * value refused for its form (400) that came from an option is a usage error (exit 2), as every
 * malformed option value is; otherwise (the password on stdin, a taken email) exit 1.
 */
function cliErrorOf(e: unknown): unknown {
  if (e instanceof StoreError) return new CliError(e.message);
  if (!(e instanceof HttpError)) return e;
  const issues = e.issues.map((i) => {
    const redirect = /^redirectUris\.(\d+)$/.exec(i.path);
    const path = redirect !== null ? `--redirect-uri[${redirect[1]}]` : (OPTION_OF[i.path] ?? i.path);
    return { code: "invalid" as const, path: [path], message: i.message };
  });
  const message = e.message.replace(/\.$/, "");
  if (e.status === 400 && issues.some((i) => i.path[0]!.startsWith("--")))
    return issues.length === 1
      ? new UsageError(`${issues[0]!.path[0]}: ${issues[0]!.message}`)
      : new UsageError(message, issues);
  return new CliError(message, issues);
}

/**
 * Opens a service database (created when missing) for one change, then closes it (I50). A database
 * of one system or panel (made by `rsop serve --system/--panel`) is refused: it has no accounts.
 */
async function withService<T>(where: StoreOptions, use: (registry: TenantRegistry) => Promise<T>): Promise<T> {
  if ((where.data === undefined) === (where.store === undefined))
    throw new UsageError("give the service database: --data FILE.db (SQLite) or --store URL (PostgreSQL), one of them");
  if (where.store !== undefined && !/^postgres(ql)?:\/\//.test(where.store))
    throw new UsageError("--store takes a PostgreSQL URL: postgres://user@host:5432/database");
  const file = where.data ?? redactUrl(where.store!);
  try {
    // PostgreSQL: a running service sees the change at once (its registry follows every commit).
    const space = where.data !== undefined ? await openSqliteSpace(where.data) : await openPostgresSpace(where.store!);
    try {
      const state = await space.registry.load();
      if (state.organizations.length === 0 && (await space.tenant(1).load()) !== null)
        throw new CliError(
          `${file} holds one system or panel (served by rsop serve --system/--panel), not a service database: users, applications and keys belong to a service`,
        );
      return await use(await TenantRegistry.open(space.registry));
    } finally {
      await space.close();
    }
  } catch (e) {
    throw cliErrorOf(e);
  }
}

/** The organization a permission is for (default the root); exit 1 for an unknown one. */
function organizationOf(registry: TenantRegistry, given: string | undefined): string {
  if (given === undefined) return registry.root().id;
  if (registry.organization(given) === undefined)
    throw new CliError("unknown organization", [
      { code: "invalid", path: ["--organization"], message: `No organization has the id "${given}".` },
    ]);
  return given;
}

/** Refuses, before anything is made, an email already taken or already holding a permission there. */
function refuseTaken(registry: TenantRegistry, email: string, organization: string): void {
  const e = normalEmail(email);
  const issues = [];
  if (callerByEmail(registry, e) !== undefined)
    issues.push({
      code: "invalid" as const,
      path: ["--email"],
      message: "A user or application has this email already.",
    });
  else if (permissionsOn(registry, organization).some((p) => p.email === e))
    issues.push({
      code: "invalid" as const,
      path: ["--email"],
      message: "Has a permission (an invitation) on this organization already: accept it instead.",
    });
  if (issues.length > 0) throw new CliError("the email is taken", issues);
}

/** The password on stdin: the whole of it, one final newline removed (I51). */
async function passwordOf(io: CliIo): Promise<string> {
  const text = (await readAll(io.stdin)).replace(/\r?\n$/, "");
  if (text === "")
    throw new CliError("no password: write it on stdin (e.g. from a password manager), never as an argument", [
      { code: "invalid", path: ["password (stdin)"], message: "Is empty." },
    ]);
  return text;
}

const roleOption = () => new Option("--role <role>", "the role of its permission").choices([...ROLES]).default("admin");
/** Where the service database is: exactly one of them (I50). */
interface StoreOptions {
  data?: string;
  store?: string;
}
const dataOption = () =>
  new Option("--data <file>", "the service database (SQLite; created when missing). Not while a server uses it");
const storeOption = () =>
  new Option(
    "--store <url>",
    "the service database on PostgreSQL (postgres://…); a running service sees the change at once",
  );
const organizationOption = () =>
  new Option("--organization <id>", "the organization of its permission (default: the root)");

function json(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

interface UserOptions {
  data?: string;
  store?: string;
  email: string;
  firstName?: string;
  lastName?: string;
  organization?: string;
  role: Role;
}

function usersCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  // Made by `program.command` so that it inherits the program's output and exit handling.
  const users = program.command("users").description("Users of a service database: people who log in.");
  users
    .command("add")
    .description(
      "Add a user, its password read from stdin (all of it, one final newline removed), with a permission for its email.",
    )
    .addOption(dataOption())
    .addOption(storeOption())
    .requiredOption("--email <email>", "the user's email (unique among users and applications)")
    .option("--first-name <name>", "the user's first name")
    .option("--last-name <name>", "the user's last name")
    .addOption(organizationOption())
    .addOption(roleOption())
    .addHelpText(
      "after",
      "\nPrints {id, email, permission} as JSON. The password has 12 to 1024 characters.\n" +
        "Example: printf '%s' \"$PASSWORD\" | rsop users add --data service.db --email ada@example.com\n",
    )
    .action(async (opts: UserOptions) => {
      const password = await passwordOf(io);
      const out = await withService(opts, async (registry) => {
        const organization = organizationOf(registry, opts.organization);
        refuseTaken(registry, opts.email, organization);
        const user = await createUser(registry, {
          email: opts.email,
          password,
          ...(opts.firstName !== undefined ? { firstName: opts.firstName } : {}),
          ...(opts.lastName !== undefined ? { lastName: opts.lastName } : {}),
        });
        const p = await createPermission(registry, organization, { email: user.email, role: opts.role }, OPERATOR);
        return { id: user.id, email: user.email, permission: permissionAnswer(p) };
      });
      json(io, out);
      setCode(0);
    });
}

interface AppOptions {
  data?: string;
  store?: string;
  name: string;
  email: string;
  redirectUri: string[];
  organization?: string;
  role: Role;
}

function appsCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  // Made by `program.command` so that it inherits the program's output and exit handling.
  const apps = program.command("apps").description("Applications (OAuth 2.0 clients) of a service database.");
  apps
    .command("add")
    .description("Add an application, with a permission for its email; prints its client id and secret.")
    .addOption(dataOption())
    .addOption(storeOption())
    .requiredOption("--name <name>", "the application's name")
    .requiredOption("--email <email>", "the application's email (unique among users and applications)")
    .option(
      "--redirect-uri <uri>",
      "a redirect URI of the authorization code grant (repeatable): https, or http on a loopback host",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .addOption(organizationOption())
    .addOption(roleOption())
    .addHelpText(
      "after",
      "\nPrints {client_id, client_secret} as JSON: the secret is shown this once and never stored.\n",
    )
    .action(async (opts: AppOptions) => {
      const out = await withService(opts, async (registry) => {
        const organization = organizationOf(registry, opts.organization);
        refuseTaken(registry, opts.email, organization);
        const made = await createApp(registry, { name: opts.name, email: opts.email, redirectUris: opts.redirectUri });
        await createPermission(registry, organization, { email: opts.email, role: opts.role }, OPERATOR);
        return made;
      });
      json(io, { client_id: out.client_id, client_secret: out.client_secret });
      setCode(0);
    });
}

function keysCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  // Made by `program.command` so that it inherits the program's output and exit handling.
  const keys = program.command("keys").description("The signing keys of a service database's tokens.");
  keys
    .command("rotate")
    .description(
      "Make a new signing key and retire the current one (it still verifies the tokens it signed until they expire).",
    )
    .addOption(dataOption())
    .addOption(storeOption())
    .addHelpText("after", "\nPrints {kid} as JSON: the new key's id.\n")
    .action(async (opts: StoreOptions) => {
      const kid = await withService(opts, (registry) => rotateKeys(registry));
      json(io, { kid });
      setCode(0);
    });
}

/** Registers `rsop users add`, `rsop apps add` and `rsop keys rotate` on the program. */
export function registerIdentityCommands(program: Command, io: CliIo, setCode: (code: number) => void): void {
  usersCommand(program, io, setCode);
  appsCommand(program, io, setCode);
  keysCommand(program, io, setCode);
}
