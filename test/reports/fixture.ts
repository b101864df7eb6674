// A small 2.0 system for the report scenarios: two partitions, three groups, holders with cards,
// digital credentials (active and pending), PINs, dates, custom fields, and hostile names.
import { parseSnapshotOrThrow, type SystemSnapshot } from "../../src/model/index.js";

export function reportSystemInput(): Record<string, any> {
  return {
    format: "rsop-system/1",
    systemId: "sys-reports",
    timezone: "America/Chicago",
    partitions: [
      { id: "p-main", name: "Main", default: true },
      { id: "p-lab", name: "Lab" },
    ],
    customFields: [{ id: "badge", type: "string", partition: "p-main" }],
    groups: [
      { id: "g-day", name: "Day", partition: "p-main" },
      { id: "g-night", name: "Night", partition: "p-main" },
      { id: "g-lab", name: "Lab staff", partition: "p-lab" },
    ],
    holders: [
      {
        id: "h-ann",
        firstName: "Ann",
        lastName: "Lee",
        email: "ann.lee@example.com",
        partition: "p-main",
        pin: "2468",
        duressPin: "8642",
        activeDate: "2026-01-05T08:00:00",
        expireDate: "2026-12-31T18:00:00",
        customFields: { badge: "B-1" },
        groups: ["g-day"],
        credentials: [
          { id: "c-1", credentialNumber: 10000, facilityCode: 17, types: ["card"] },
          { id: "c-2", credentialNumber: 10050, facilityCode: 17, types: ["card"] },
          { id: "c-3", credentialNumber: 777001, types: ["touch"] },
        ],
      },
      {
        id: "h-bob",
        firstName: "Bob",
        lastName: "Lee",
        email: "BOB@example.com",
        partition: "p-main",
        groups: ["g-day", "g-night"],
        credentials: [
          { id: "c-4", credentialNumber: 10100, types: ["card"] },
          { id: "c-5", credentialNumber: null, types: ["token"] },
        ],
      },
      {
        id: "h-cat",
        firstName: "Cat",
        lastName: "Adams",
        partition: null,
        enabled: false,
        pin: "1357",
        groups: ["g-night"],
        credentials: [{ id: "c-6", credentialNumber: 777002, types: ["touch", "token"] }],
      },
      {
        id: "h-dan",
        firstName: "<script>alert(1)</script>",
        lastName: '=HYPERLINK("http://evil","x")',
        email: "@dan",
        partition: "p-lab",
        groups: ["g-lab"],
        credentials: [{ id: "c-7", credentialNumber: 20000, types: ["card"] }],
      },
      {
        id: "h-eve",
        firstName: "eve",
        lastName: "lee",
        email: 'eve, "the" tester',
        partition: "p-lab",
        credentials: [{ id: "c-8", credentialNumber: null, types: ["touch"] }],
      },
    ],
    cloudNodes: [{ id: "n-1", name: "HQ", serialNumber: "SN-1", timezone: "America/Chicago" }],
    connections: [{ id: "k-1", name: "Ctl", type: "usb", port: 1, cloudNode: "n-1" }],
    devices: [
      {
        id: "d-front",
        name: "Front door",
        connection: "k-1",
        port: 1,
        type: "primaryReader",
        publicIcon: "swingingDoor",
        cloudNode: "n-1",
      },
      {
        id: "d-lab",
        name: "Lab door",
        connection: "k-1",
        port: 2,
        type: "primaryReader",
        publicIcon: "swingingDoor",
        cloudNode: "n-1",
      },
    ],
    rules: [
      {
        id: "r-day",
        name: "Day front",
        type: "door",
        groupId: "g-day",
        devices: ["d-front"],
        startTime: "06:00:00",
        stopTime: "18:00:00",
        recurring: ["Mon", "Tue", "Wed", "Thu", "Fri"],
      },
      {
        id: "r-night-deny",
        name: "Night lab deny",
        type: "door",
        groupId: "g-night",
        devices: ["d-lab"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"],
        allow: false,
      },
      {
        id: "r-lab",
        type: "door",
        groupId: "g-lab",
        devices: ["d-lab"],
        startTime: "00:00:00",
        stopTime: "24:00:00",
        recurring: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"],
      },
    ],
  };
}

export function reportSystem(): SystemSnapshot {
  return parseSnapshotOrThrow(reportSystemInput());
}
