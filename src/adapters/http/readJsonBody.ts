// Reads a JSON request body with a byte limit: Content-Length is checked first, and the bytes are
// counted while reading as well, because a client may send no Content-Length (chunked) or a wrong one.
import { HttpError } from "./httpError.js";

/** `application/json` or any `application/…+json`, parameters (charset) ignored: JSON is UTF-8. */
export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `The request body is larger than ${maxBytes} bytes.`);
}

/**
 * The parsed JSON body of a request.
 * @throws HttpError 415 (not JSON), 413 (over `maxBytes`), 400 (empty, not UTF-8, not JSON).
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  if (!isJsonContentType(request.headers.get("content-type")))
    throw new HttpError(415, 'The request body must be JSON, sent with "Content-Type: application/json".');
  const declared = request.headers.get("content-length");
  if (declared !== null && /^[0-9]+$/.test(declared.trim()) && Number(declared.trim()) > maxBytes) throw tooLarge(maxBytes);

  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
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
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new HttpError(400, `The request body is not valid JSON: ${(e as Error).message}`);
  }
}
