/**
 * rsop-engine/http: the RSOP, decision and device-access routes as one web-standard
 * `(Request) => Promise<Response>` handler, for Node, Deno, Bun, Hono or an edge runtime.
 *
 * Like the root entry, it imports no Node built-in and no server library.
 * @packageDocumentation
 */
export { createHttpHandler } from "./adapters/http/createHttpHandler.js";

export type { HttpHandler, HttpHandlerOptions } from "./adapters/http/createHttpHandler.js";
export type { HttpErrorBody, HttpIssue } from "./service/httpError.js";
export type { Grant, Role } from "./service/auth/grant.js";
