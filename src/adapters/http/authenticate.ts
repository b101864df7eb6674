// The bearer-token check shared by the read-only handler and the `--data` server.
import { bearerToken } from "../../service/auth/bearerToken.js";
import { HttpError } from "../../service/httpError.js";

/** What an authorizer answers: allowed, an invalid token (401), or a valid token without access to this system (403). */
export type AuthorizeAnswer = boolean | "forbidden";

/** Decides whether a bearer token may use a system. */
export type Authorize = (token: string, systemId: string) => AuthorizeAnswer | Promise<AuthorizeAnswer>;

/**
 * Checks the Authorization header of `request` against `authorize` for `systemId`.
 * @throws HttpError 401 (no header, malformed, refused token; with `WWW-Authenticate`) or 403 (`"forbidden"`).
 */
export async function authenticate(request: Request, authorize: Authorize, systemId: string): Promise<void> {
  const header = request.headers.get("authorization");
  const token = bearerToken(header);
  if (token === null) {
    const message =
      header === null
        ? "Authorization required: send Authorization: Bearer <token>."
        : "Malformed Authorization header: expected Bearer <token>.";
    const challenge = header === null ? 'Bearer realm="rsop"' : 'Bearer realm="rsop", error="invalid_request"';
    throw new HttpError(401, message, [], { "www-authenticate": challenge });
  }
  const answer = await authorize(token, systemId);
  if (answer === "forbidden")
    throw new HttpError(403, "This token may not query this system.", [], {
      "www-authenticate": 'Bearer realm="rsop", error="insufficient_scope"',
    });
  if (answer !== true)
    throw new HttpError(401, "Invalid token.", [], {
      "www-authenticate": 'Bearer realm="rsop", error="invalid_token"',
    });
}
