// Every answer any test receives from a server of ours on 127.0.0.1, through fetch, is checked
// against that server's own /openapi.json (openApiCheck.ts: the status is one the route declares,
// and a JSON body matches its schema), not only the answers of the shared test callers. A server
// that serves no document (a test's own receiver, a stopped server) is not checked.
import { checkAnswerLater, prefetchDocument } from "../http/openApiCheck.js";

const LOOPBACK = /^http:\/\/127\.0\.0\.1:\d+$/;
/** The base paths the tests serve under (`--base-path /v2`); the document is below the base path. */
const BASE_PATHS = ["/v2"];

const plain = globalThis.fetch;

/** A copy's JSON, read when the test finishes (undefined for no body, or one that is not JSON). */
async function jsonOf(copy: Response): Promise<unknown> {
  try {
    const text = await copy.text();
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function checkedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await plain(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!LOOPBACK.test(url.origin) || url.pathname.endsWith("/openapi.json") || url.pathname.includes("/docs"))
    return res;
  const base = BASE_PATHS.find((b) => url.pathname === b || url.pathname.startsWith(`${b}/`)) ?? "";
  const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  const type = res.headers.get("content-type");
  // A system a migration staged documents its routes below its id, and only while it is staged:
  // read that document now, in case the root one has no route for this answer.
  const first = url.pathname.split("/")[1];
  if (res.status < 400 && first !== undefined && first !== "" && first !== "api")
    prefetchDocument(`${url.origin}/${first}/openapi.json`);
  // A copy, so the test reads the answer as it would without this check.
  const copy = type?.startsWith("application/json") === true ? res.clone() : null;
  checkAnswerLater(
    `${url.origin}${base}/openapi.json`,
    method,
    url.href,
    res.status,
    () => (copy === null ? Promise.resolve(undefined) : jsonOf(copy)),
    type,
  );
  return res;
}

globalThis.fetch = checkedFetch as typeof fetch;
