// Reads a JSON request body with a byte limit: Content-Length is checked first, and the bytes are
// counted while reading as well, because a client may send no Content-Length (chunked) or a wrong one.
import { formatPath } from "../../model/index.js";
import { JSON_MAX_DEPTH, tooDeepMessage } from "../../model/plainCopy.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";
import { HttpError } from "../../service/httpError.js";

/** `application/json` or any `application/…+json`, parameters (charset) ignored: JSON is UTF-8. */
export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `The request body is larger than ${maxBytes} bytes.`);
}

/** The message of a body that stopped arriving: the client closed the connection (or the server's request timeout did). */
export const BODY_CUT_OFF = "The request body ended before it was complete (the connection was closed).";

/**
 * The parsed JSON body of a request.
 * @throws HttpError 415 (not JSON), 413 (over `maxBytes`), 400 (empty, cut off, not UTF-8, not JSON:
 *   with the line and column of the first error, never quoting the body, which may hold a PIN; nested
 *   deeper than JSON_MAX_DEPTH: also the path of the first value too deep, HJ1).
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  if (!isJsonContentType(request.headers.get("content-type")))
    throw new HttpError(415, 'The request body must be JSON, sent with "Content-Type: application/json".');
  const declared = request.headers.get("content-length");
  if (declared !== null && /^[0-9]+$/.test(declared.trim()) && Number(declared.trim()) > maxBytes)
    throw tooLarge(maxBytes);

  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch {
        throw new HttpError(400, BODY_CUT_OFF);
      }
      const { done, value } = chunk;
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        // Stop reading at once: the rest of an oversized body is never buffered.
        await reader.cancel().catch(() => undefined);
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  }
  if (size === 0) throw new HttpError(400, "The request body is empty.");
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(400, "The request body is not valid UTF-8.");
  }
  const parsed = parseJson(text);
  if (parsed.ok) return parsed.value;
  // Too deep (HJ1): refused before anything walks the value, with the path of the first value too deep.
  if (parsed.path !== undefined)
    throw new HttpError(400, `The request body is nested too deeply: ${jsonErrorText(parsed)}.`, [
      { path: formatPath(parsed.path), message: tooDeepMessage(JSON_MAX_DEPTH) },
    ]);
  throw new HttpError(400, `The request body is not valid JSON: ${jsonErrorText(parsed)}.`);
}
