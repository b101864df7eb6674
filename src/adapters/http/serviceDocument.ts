// The service's one OpenAPI document (semantics T53), served without a token at /openapi.json with
// a readable page at /docs: the accounts host's routes, every system's and every panel's.
import type { Env, Hono } from "hono";
import type { DeclaredRoute } from "./routes/declaredRoute.js";
import { docsRoutes } from "./routes/docsRoutes.js";
import { buildOpenApiDocument } from "./routes/openApiDocument.js";
import { serviceRouteDeclarations } from "./routes/servedRoutes.js";

/** Registers /openapi.json and /docs of the service on `app` (`extra`: routes served beside the declared ones, e.g. migration). */
export async function serveServiceDocument<E extends Env>(
  app: Hono<E>,
  extra: readonly DeclaredRoute[] = [],
): Promise<void> {
  const document = await buildOpenApiDocument(serviceRouteDeclarations(extra), {
    title: "rsop-engine: the service",
    version: "2.0",
    basePath: "",
  });
  const docs = docsRoutes(document, "");
  app.on(["GET", "HEAD"], ["/openapi.json", "/docs", "/docs/*"], async (c, next) => {
    const answer = docs.answer(c.req.method, new URL(c.req.url).pathname);
    if (answer !== null) return answer;
    await next();
  });
}
