import { expect, test } from "vitest";
import { parseSnapshot } from "../src/model/index.js";

test("parse reports schema and reference problems together", () => {
  const r = parseSnapshot({
    format: "rsop-system/1",
    systemId: "s",
    timezone: "Mars/Base",
    holders: [
      { id: "h", firstName: "A", lastName: "B", groups: ["g"], credentials: [{ id: "c", types: ["card"] }] },
      { id: "h2", firstName: "A", lastName: "B", groups: ["g"] },
    ],
  });
  expect(r.ok).toBe(false);
  if (!r.ok)
    expect(r.issues.map((i) => [i.path.join("."), i.message])).toMatchInlineSnapshot(`
    [
      [
        "timezone",
        ""Mars/Base" is not an IANA time zone.",
      ],
      [
        "holders.0.credentials.0.credentialNumber",
        "A card credential needs a credentialNumber.",
      ],
      [
        "holders.1.groups.0",
        "Names group "g", which is not in the snapshot.",
      ],
    ]
  `);
});
