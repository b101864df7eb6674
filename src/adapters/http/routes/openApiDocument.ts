// The OpenAPI 3.1 document of a server, generated from its route declarations with
// @asteasolutions/zod-to-openapi (it turns the same zod schemas into JSON Schema 2020-12 and adds
// the parameters, bodies and answers the document needs around them).
import type { DeclaredRoute } from "./declaredRoute.js";
import { openApiPath } from "./declaredRoute.js";

/** Sentences of an answer status, for the document. */
const STATUS: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  204: "No content",
  303: "See other: a redirect (the login page's answer to the application)",
  400: "The request is invalid",
  401: "No token, or an invalid one",
  403: "The token may not do this",
  404: "Not found",
  405: "Method not allowed",
  409: "Conflicts with the current state",
  413: "Too large",
  415: "Not the expected media type",
  429: "Too many attempts or requests; see Retry-After",
  500: "Internal server error",
  502: "A server this one depends on failed (SMTP)",
  501: "Not served: read live from the hardware",
  503: "Unavailable now; try again",
};

/** An OpenAPI document, as plain JSON. */
export type OpenApiDocument = Readonly<Record<string, unknown>> & {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
};

/**
 * The OpenAPI 3.1 document of `routes`, below `basePath`. zod-to-openapi is loaded here, on first use,
 * so that the CLI's other commands never load it.
 */
export async function buildOpenApiDocument(
  routes: readonly DeclaredRoute[],
  info: { readonly title: string; readonly version: string; readonly basePath: string },
): Promise<OpenApiDocument> {
  const { OpenAPIRegistry, OpenApiGeneratorV31 } = await import("@asteasolutions/zod-to-openapi");
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  for (const r of routes) {
    const responses: Record<string, { description: string; content?: Record<string, { schema: never }> }> = {};
    for (const [status, schema] of Object.entries(r.answers))
      responses[status] =
        schema === null
          ? { description: STATUS[Number(status)] ?? status }
          : {
              description: STATUS[Number(status)] ?? status,
              content: { "application/json": { schema: schema as never } },
            };
    registry.registerPath({
      method: r.method.toLowerCase() as "get",
      path: `${info.basePath}${openApiPath(r.path)}`,
      operationId: r.id,
      summary: r.summary,
      description: accessSentence(r),
      tags: [...r.tags],
      ...(r.access.scope === "public" ? {} : { security: [{ [bearer.name]: [] }] }),
      request: {
        ...(Object.keys(r.params.shape).length > 0 ? { params: r.params } : {}),
        ...(r.query !== undefined ? { query: r.query } : {}),
        ...(r.body !== undefined
          ? { body: { content: { [r.bodyType ?? "application/json"]: { schema: r.body } } } }
          : {}),
      },
      responses,
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: "3.1.0",
    info: { title: info.title, version: info.version },
  }) as unknown as OpenApiDocument;
}

/** Who may call a route, as the document says it. */
function accessSentence(r: DeclaredRoute): string {
  if (r.access.scope === "public") return "No token needed.";
  const roles = r.access.roles.join(", ");
  return r.access.scope === "partitions"
    ? `Roles: ${roles}. A manager or reporter is answered on its partitions only.`
    : `Roles: ${roles} (the answer names holders of every partition).`;
}
