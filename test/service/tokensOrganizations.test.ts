// The tokens file in a service (semantics T10): `organizations` and `user` beside `role` and
// `partitions`, refusals named by the entry's place (`#n`), never by the token; a permission reaches
// its organization's descendants; an entry without organizations reaches every organization.
import { describe, expect, test } from "vitest";
import { parseTokens, reaches } from "../../src/service/auth/tokens.js";

const T1 = "a".repeat(24);
const T2 = "b".repeat(24);
const T3 = "c".repeat(24);

describe("parseTokens with organizations and user", () => {
  test("accepted: organizations become a set, user is kept; an entry without them is as before", () => {
    const r = parseTokens({
      [T1]: { role: "admin" },
      [T2]: {
        role: "integrator",
        organizations: ["d1", "c9"],
        user: { id: "u1", firstName: "Ada", lastName: "Byron", email: "ada@example.test" },
      },
      [T3]: {
        role: "manager",
        partitions: ["p1"],
        organizations: ["c1"],
        user: { id: "u2", firstName: "B", lastName: "C" },
      },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [a, b, c] = r.entries.map((e) => e.grant);
    expect(a).toEqual({ role: "admin", partitions: null });
    expect(a!.organizations).toBeUndefined();
    expect(b!.organizations).toEqual(new Set(["d1", "c9"]));
    expect(b!.user).toEqual({ id: "u1", firstName: "Ada", lastName: "Byron", email: "ada@example.test" });
    expect(c!.user?.email).toBeNull();
    expect(c!.partitions).toEqual(new Set(["p1"]));
  });

  test("refusals, each at #n.<field>", () => {
    const r = parseTokens({
      [T1]: { role: "admin", organizations: [] },
      [T2]: { role: "admin", organizations: ["ok", "", 3], user: { id: "", firstName: 1, nick: "x" } },
      [T3]: { role: "admin", organizations: "d1", user: "me", team: 1 },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toEqual([
      "#1.organizations",
      "#2.organizations.1",
      "#2.organizations.2",
      "#2.user.nick",
      "#2.user.id",
      "#2.user.firstName",
      "#2.user.lastName",
      "#3.team",
      "#3.organizations",
      "#3.user",
    ]);
    for (const i of r.issues) expect(i.message).not.toContain(T1.slice(0, 8));
  });
});

describe("reaches", () => {
  const ancestors: Record<string, string[]> = { r: [], d1: ["r"], c1: ["r", "d1"], d2: ["r"], c2: ["r", "d2"] };
  const of = (id: string) => ancestors[id] ?? [];
  test("a permission reaches its organization and every descendant, nothing else", () => {
    const g = { role: "integrator" as const, partitions: null, organizations: new Set(["d1"]) };
    expect(["r", "d1", "c1", "d2", "c2", "unknown"].map((o) => reaches(g, o, of))).toEqual([
      false,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
  test("no organizations (or null): every organization", () => {
    expect(reaches({ role: "admin", partitions: null }, "c2", of)).toBe(true);
    expect(reaches({ role: "admin", partitions: null, organizations: null }, "c2", of)).toBe(true);
  });
});
