import { expect, test } from "vitest";
import { bearerToken, isBearerToken } from "../../src/service/auth/bearerToken.js";
import { tokenAuthorizer } from "../../src/adapters/http/tokenAuthorizer.js";

test("bearerToken reads `Bearer <token68>` and nothing else", () => {
  expect(bearerToken("Bearer abc.DEF-_~+/09==")).toBe("abc.DEF-_~+/09==");
  expect(bearerToken("bearer   abc ")).toBe("abc");
  for (const h of [null, "", "Bearer", "Bearer ", "Basic abc", "Bearer a b", "Bearer =abc", "Bearer a=b", "Bearerabc"])
    expect(bearerToken(h)).toBeNull();
});

test("tokenAuthorizer accepts exactly its token, whatever the system", () => {
  const authorize = tokenAuthorizer("s3cret-token");
  expect(authorize("s3cret-token", "any-system")).toBe(true);
  for (const t of ["s3cret-toke", "s3cret-token2", "S3cret-token", "", "x".repeat(10_000)])
    expect(authorize(t, "any-system")).toBe(false);
});

test("tokenAuthorizer refuses a token no client could send", () => {
  expect(isBearerToken("two words")).toBe(false);
  expect(() => tokenAuthorizer("")).toThrow(TypeError);
  expect(() => tokenAuthorizer("two words")).toThrow(TypeError);
});
