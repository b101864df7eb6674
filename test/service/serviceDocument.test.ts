import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { removeTempDirs, tempDir } from "../http/fixtures.js";
import { buildOpenApiDocument } from "../../src/adapters/http/routes/openApiDocument.js";
import { serviceRouteDeclarations } from "../../src/adapters/http/routes/servedRoutes.js";
import { migrationRoutes } from "../../src/adapters/http/routes/serviceRoutes.js";
import { Validator } from "@seriousme/openapi-schema-validator";

describe("T53: the service's one OpenAPI document", () => {
  test("holds the accounts, systems and per-node routes, each operation once, and is a valid OpenAPI 3.1 document", async () => {
    const routes = serviceRouteDeclarations(migrationRoutes());
    const ids = routes.map((r) => r.id);
    expect(ids.length).toBe(new Set(ids).size);
    const doc = await buildOpenApiDocument(routes, { title: "rsop-engine: the service", version: "2.0", basePath: "" });
    const paths = Object.keys(doc.paths);
    expect(paths).toContain("/api/organizations/{dealerId}/children");
    expect(paths).toContain("/api/ous/{organizationId}/panels");
    expect(paths).toContain("/{systemId}/holders");
    expect(paths).toContain("/panels/{serial}/api/persons");
    const result = await new Validator().validate(doc as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
  });
});

describe("T53: served without a token", () => {
  test("GET /openapi.json and /docs on the service answer the document and its page", async () => {
    const server = await startServiceServer({
      dataFile: join(tempDir(), "service.db"),
      token: "root-admin-token-0123456789",
      port: 0,
      log: () => {},
    });
    try {
      const doc = await fetch(`${server.url}/openapi.json`);
      expect(doc.status).toBe(200);
      const body = (await doc.json()) as { paths: Record<string, unknown> };
      expect(Object.keys(body.paths)).toContain("/panels/{serial}/api/persons");
      const page = await fetch(`${server.url}/docs`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    } finally {
      await server.close();
      removeTempDirs();
    }
  });
});
