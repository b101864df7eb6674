// `GET /openapi.json` and `GET /docs`: the document, and Swagger UI (the swagger-ui-dist package,
// served from node_modules by this server: no CDN) reading it. Neither needs a token: the document
// describes routes and holds no data.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { jsonResponse } from "../../../service/httpError.js";
import type { OpenApiDocument } from "./openApiDocument.js";

/** The files of swagger-ui-dist a browser loads, with their content types. */
const ASSETS: Readonly<Record<string, string>> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "index.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
  "favicon-16x16.png": "image/png",
  "swagger-initializer.js": "text/javascript; charset=utf-8",
};

/** The folder of swagger-ui-dist. */
function swaggerUiFolder(): string {
  const require = createRequire(import.meta.url);
  return (require("swagger-ui-dist/absolute-path.js") as () => string)();
}

/** The answers of the document and docs routes, by path below the base path (null: not one of them). */
export interface DocsRoutes {
  readonly answer: (method: string, path: string) => Promise<Response> | null;
}

/**
 * Serves `document` at `${basePath}/openapi.json` and Swagger UI at `${basePath}/docs`: its own
 * index.html with the asset paths under `/docs/` and an initializer that names this document.
 */
export function docsRoutes(document: OpenApiDocument, basePath: string): DocsRoutes {
  const folder = swaggerUiFolder();
  const docsBase = `${basePath}/docs`;
  const initializer = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(`${basePath}/openapi.json`)},
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
  });
};
`;
  const cache = { "cache-control": "no-cache" };
  async function asset(name: string, type: string): Promise<Response> {
    if (name === "swagger-initializer.js")
      return new Response(initializer, { headers: { "content-type": type, ...cache } });
    return new Response(await readFile(join(folder, name)), { headers: { "content-type": type, ...cache } });
  }
  async function page(): Promise<Response> {
    const html = (await readFile(join(folder, "index.html"), "utf8"))
      .replace(/(href|src)="(?:\.\/)?([\w.-]+\.(?:css|js|png))"/g, `$1="${docsBase}/$2"`)
      .replace("<title>Swagger UI</title>", `<title>${String((document.info as { title?: string })?.title)}</title>`);
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8", ...cache } });
  }
  return {
    answer(method, path) {
      if (method !== "GET" && method !== "HEAD") return null;
      if (path === "/openapi.json") return Promise.resolve(jsonResponse(200, document, 2));
      if (path === "/docs" || path === "/docs/") return page();
      // Only the files of the page: any other path below /docs is a system's (a system may be named "docs").
      const name = path.startsWith("/docs/") ? path.slice("/docs/".length) : "";
      const type = ASSETS[name];
      return type === undefined ? null : asset(name, type);
    },
  };
}
