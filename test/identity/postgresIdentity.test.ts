// Identity across the processes of one PostgreSQL database (semantics I4, I6, I24, I26): a token one
// replica issued is accepted by another (the signing key made by the first is read again by the
// second when a token names it), and a refresh token presented to both replicas at once is used
// once: one answers a new token, the other refuses and revokes the chain.
import { describe, expect, test } from "vitest";
import { type RunningServiceServer, startServiceServer } from "../../src/adapters/http/startServiceServer.js";
import { createApp, createUser } from "../../src/service/identity/accounts.js";
import { issueCode } from "../../src/service/identity/codes.js";
import { KIND, type PermissionRecord } from "../../src/service/identity/records.js";
import { PG, SKIP_NOTE, freshDatabase, useCluster } from "../store/pgSupport.js";

useCluster();

const CALLBACK = "https://app.example.test/callback";

async function token(
  server: RunningServiceServer,
  app: { client_id: string; client_secret: string },
  form: Record<string, string>,
) {
  const res = await fetch(`${server.url}/oauth2/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe("identity on PostgreSQL replicas", () => {
  test.skipIf(!PG.ok)(
    `a token of one replica works on the other; a refresh raced on both is used once${SKIP_NOTE}`,
    async () => {
      const storeUrl = await freshDatabase();
      const a = await startServiceServer({ storeUrl, port: 0, log: () => {} });
      const b = await startServiceServer({ storeUrl, port: 0, log: () => {} });
      try {
        const user = await createUser(a.registry, { email: "lee@example.test", password: "correct horse battery" });
        const app = await createApp(a.registry, { name: "Gate", email: "gate@example.test", redirectUris: [CALLBACK] });
        const permission: PermissionRecord = {
          id: "p-lee",
          organization: a.registry.root().id,
          email: user.email,
          name: "Lee",
          role: "admin",
          partitions: null,
          userId: user.id,
          created: new Date().toISOString(),
          accepted: null,
        };
        await a.registry.updateRecords(() => ({
          changes: [{ op: "putRecord", kind: KIND.permission, id: permission.id, value: permission, ifVersion: 0 }],
          result: undefined,
        }));
        const code = await issueCode(a.registry, {
          clientId: app.client_id,
          redirectUri: CALLBACK,
          userId: user.id,
          scope: "openid offline_access",
        });
        // Replica A issues (and makes the signing key); replica B accepts the ID token.
        const first = await token(a, app, { grant_type: "authorization_code", code, redirect_uri: CALLBACK });
        expect(first.status, JSON.stringify(first.body)).toBe(200);
        const mine = await fetch(`${b.url}/api/organizations/mine`, {
          headers: { authorization: `Bearer ${first.body.id_token}` },
        });
        expect(mine.status).toBe(200);
        // One refresh token, presented to both replicas at once: exactly one new token.
        const raced = await Promise.all([
          token(a, app, { grant_type: "refresh_token", refresh_token: first.body.refresh_token! }),
          token(b, app, { grant_type: "refresh_token", refresh_token: first.body.refresh_token! }),
        ]);
        expect(raced.map((r) => r.status).sort()).toEqual([200, 400]);
        expect(raced.find((r) => r.status === 400)!.body.error).toBe("invalid_grant");
        // The loser counted it as a reuse: the winner's new token is revoked too.
        const winner = raced.find((r) => r.status === 200)!.body;
        const after = await token(b, app, { grant_type: "refresh_token", refresh_token: winner.refresh_token! });
        expect(after.status).toBe(400);
      } finally {
        await a.close();
        await b.close();
      }
    },
    60_000,
  );
});
