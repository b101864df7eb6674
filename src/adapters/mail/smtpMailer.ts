// The Mailer of `--smtp URL` (semantics I9, I90): nodemailer over SMTP. The URL names the server
// (`smtp://` port 587 by default, STARTTLS when the server offers it; `smtps://` port 465, TLS from
// the start), its user and password, and two settings of ours in the query: `from=ADDRESS` (default
// `rsop@<this machine's hostname>`) and `tls=off` (never STARTTLS: a local relay without TLS) or
// `tls=require` (refuse a server that does not offer STARTTLS). A password is never sent in the
// clear to another machine unless `tls=off` says so. The transport is built from the parsed
// settings, not from the URL, so that our query keys never reach nodemailer. Every wait is bounded.
import { hostname } from "node:os";
import { createTransport } from "nodemailer";
import type { Mailer, MailMessage } from "../../service/identity/mailer.js";

/** What an `--smtp` URL says. */
export interface SmtpSettings {
  readonly secure: boolean;
  readonly host: string;
  readonly port: number;
  readonly user?: string;
  readonly password?: string;
  readonly from: string;
  readonly tls: "auto" | "off" | "require";
}

/** The URL's problem (never quoting its password). */
export class SmtpUrlError extends Error {
  override readonly name = "SmtpUrlError";
}

/** The longest wait of a connection, a greeting and a silent socket, ms. */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

const ADDRESS = /^[^\s@<>,;"()[\]\\]+@[^\s@<>,;"()[\]\\]+$/;
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/i;
const QUERY_KEYS = ["from", "tls"];

/**
 * Checks and reads an `smtp://` or `smtps://` URL: `smtp[s]://[user[:password]@]host[:port][?from=ADDRESS&tls=off|require]`.
 * @throws SmtpUrlError with a message that names the problem.
 */
export function parseSmtpUrl(url: string): SmtpSettings {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SmtpUrlError("must be a URL such as smtp://user:password@mail.example.com:587?from=rsop@example.com");
  }
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:")
    throw new SmtpUrlError(`must start with smtp:// or smtps://, not ${u.protocol}//`);
  if (u.hostname === "") throw new SmtpUrlError("names no host");
  if (u.pathname !== "" && u.pathname !== "/") throw new SmtpUrlError("takes no path");
  if (u.hash !== "") throw new SmtpUrlError("takes no fragment");
  const unknown = [...u.searchParams.keys()].filter((k) => !QUERY_KEYS.includes(k));
  if (unknown.length > 0)
    throw new SmtpUrlError(`takes only the query keys from and tls, not ${unknown.map((k) => `"${k}"`).join(", ")}`);
  const tls = u.searchParams.get("tls") ?? "auto";
  if (tls !== "auto" && tls !== "off" && tls !== "require")
    throw new SmtpUrlError(`tls must be off or require, not "${tls}"`);
  const from = u.searchParams.get("from") ?? `rsop@${hostname()}`;
  if (!ADDRESS.test(from)) throw new SmtpUrlError(`from must be an e-mail address, not "${from}"`);
  const secure = u.protocol === "smtps:";
  let user: string | undefined;
  let password: string | undefined;
  try {
    user = u.username === "" ? undefined : decodeURIComponent(u.username);
    password = u.password === "" ? undefined : decodeURIComponent(u.password);
  } catch {
    throw new SmtpUrlError("has a user or password with malformed percent-encoding");
  }
  if (password !== undefined && user === undefined) throw new SmtpUrlError("gives a password without a user");
  return {
    secure,
    host: u.hostname,
    port: u.port === "" ? (secure ? 465 : 587) : Number(u.port),
    ...(user !== undefined ? { user } : {}),
    ...(password !== undefined ? { password } : {}),
    from,
    tls: tls as SmtpSettings["tls"],
  };
}

/**
 * A Mailer over the SMTP server of `url` (parseSmtpUrl). One connection per message (no pool): the
 * activation messages are few.
 * @throws SmtpUrlError for a malformed URL.
 */
export function createSmtpMailer(url: string): Mailer {
  const s = parseSmtpUrl(url);
  const remote = !LOOPBACK.test(s.host);
  const transport = createTransport({
    host: s.host.replace(/^\[(.*)\]$/, "$1"),
    port: s.port,
    secure: s.secure,
    ...(s.user !== undefined ? { auth: { user: s.user, pass: s.password ?? "" } } : {}),
    ignoreTLS: s.tls === "off",
    // A password crosses the network only encrypted, unless the URL says tls=off.
    requireTLS: s.tls === "require" || (s.tls === "auto" && !s.secure && remote && s.user !== undefined),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(message: MailMessage): Promise<void> {
      await transport.sendMail({
        from: s.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html !== undefined ? { html: message.html } : {}),
      });
    },
    async close(): Promise<void> {
      transport.close();
    },
  };
}
