#!/usr/bin/env node
// Writes examples/building.json: the `rsop-system/1` snapshot that `npm start` demos — a fictional
// hospital campus (St. Brigid's Regional Medical Center, Chicago, with a small London annex).
//
//   node examples/generateBuilding.mjs [outPath]      (default: examples/building.json)
//
// Deterministic: a seeded PRNG (mulberry32) drives every random choice and no clock is read, so two
// runs write byte-identical files. Plain Node ESM, no dependencies.
//
// The hand-written part (nodes, hardware, groups, rules and the "featured" holders holder-0001 …
// holder-0012) is what examples/requests.jsonl scans against; change it together with that file and
// examples/requests.md. The generated staff (holder-0013 …) only fill the building.

import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const SEED = 0x5b1d2026;
const HOLDER_COUNT = 300;
const DOMAIN = "stbrigid-health.example";

// ---------------------------------------------------------------------------------------------------
// PRNG

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(SEED);
/** Integer in [lo, hi]. */
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const chance = (p) => random() < p;
const pad = (n, w) => String(n).padStart(w, "0");
const digits = (n) => Array.from({ length: n }, () => String(int(0, 9))).join("");

// ---------------------------------------------------------------------------------------------------
// System, partitions, cloud nodes

const SYSTEM_ID = "3b6f2c1a-9d4e-4f7a-8c2b-5e1d0a9f7c64";

const P_MAIN = { id: "part-main-campus", name: "Main Campus", users: ["user-campus-admin"], default: true };
const P_SECURE = { id: "part-pharmacy-it", name: "Pharmacy and IT", users: ["user-campus-admin", "user-it-security"] };
const P_LONDON = { id: "part-london-annex", name: "London Annex", users: ["user-london-admin"] };
const partitions = [P_MAIN, P_SECURE, P_LONDON];
const devPart = (p) => [p.default ? { id: p.id, name: p.name, default: true } : { id: p.id, name: p.name }];

const CHI = "node-chicago-main";
const LON = "node-london-annex";
const cloudNodes = [
  {
    id: CHI,
    name: "Chicago Main",
    description: "Main hospital building, 1200 W Harrison St (fictional)",
    created: "2024-02-12T15:04:00Z",
    serialNumber: "CN-2402-CHI-00117",
    // E-cards: emergency cards held by the fire marshal and the security desk.
    ecards: [7001, 7002, 7003],
    // Offline with unknown time: only holders with 24x7 access get in.
    offlinePolicy: 1,
    killTimer: 259200,
    timezone: "America/Chicago",
    locale: "en",
    // No cardFormat: the standard 26-bit H10301 format (the seed default).
  },
  {
    id: LON,
    name: "London Annex",
    description: "Outpatient annex and records store, Southwark (fictional)",
    created: "2024-06-03T09:30:00Z",
    serialNumber: "CN-2406-LON-00342",
    ecards: [],
    offlinePolicy: 0,
    killTimer: 86400,
    timezone: "Europe/London",
    locale: "en",
    cardFormat: [
      {
        id: "H10301",
        description: "HID H10301 standard 26-bit, facility code checked per credential",
        min_input_bits: 26,
        max_input_bits: 26,
        facility_code: "ENFORCED",
        enforce_parity: true,
      },
    ],
  },
];

// ---------------------------------------------------------------------------------------------------
// Connections (controllers)

function ethernet(id, name, node, ip, mac, manufacturer) {
  const net = ip.split(".").slice(0, 3).join(".");
  return {
    id,
    name,
    type: "ethernet",
    cloudNode: node,
    connected: true,
    protocol: "IPv4",
    ipaddress: ip,
    port: 4050,
    dhcp: false,
    netmask: "255.255.255.0",
    gateway: `${net}.1`,
    dns: `${net}.2`,
    macAddress: mac,
    manufacturer,
  };
}
function usb(id, name, node) {
  return { id, name, type: "usb", cloudNode: node, connected: true, port: 1 };
}

const C_CHI_USB = "conn-chi-onboard";
const C_CHI_GROUND = "conn-chi-ground-floor";
const C_CHI_UPPER = "conn-chi-upper-floors";
const C_CHI_LIFT = "conn-chi-lift-a";
const C_LON_USB = "conn-lon-onboard";
const C_LON_CTRL = "conn-lon-controller";
const connections = [
  usb(C_CHI_USB, "Chicago Main on-board controller", CHI),
  ethernet(C_CHI_GROUND, "Ground floor controller (comms room G.14)", CHI, "10.20.1.11", "00:1B:2C:4A:11:01", "VENDOR_A"),
  ethernet(C_CHI_UPPER, "Upper floors controller (riser cupboard 4.02)", CHI, "10.20.1.12", "00:1B:2C:4A:11:02", "VENDOR_A"),
  ethernet(C_CHI_LIFT, "Lift A controller (lift motor room)", CHI, "10.20.1.20", "00:1B:2C:4A:11:20", "VENDOR_B"),
  usb(C_LON_USB, "London Annex on-board controller", LON),
  ethernet(C_LON_CTRL, "Annex controller (plant room)", LON, "10.40.1.11", "00:1B:2C:7F:40:11", "VENDOR_A"),
];

// ---------------------------------------------------------------------------------------------------
// Devices

const devices = [];
let deviceSerial = 4100;
function device(id, name, node, connection, port, fields) {
  deviceSerial += 7;
  const d = {
    id,
    name,
    cloudNode: node,
    connection,
    port,
    partition: devPart(P_MAIN),
    type: "primaryReader",
    ...fields,
  };
  if (d.type !== "floorRelay") d.readerSerialNumber = `RD-${node === CHI ? "CHI" : "LON"}-${pad(deviceSerial, 6)}`;
  d.created = fields.created ?? (node === CHI ? "2024-02-14 10:30:00" : "2024-06-05 14:00:00");
  devices.push(d);
  return id;
}
const door = (fields = {}) => ({ publicIcon: "swingingDoor", ...fields });

// Chicago, ground floor
const D_MAIN = device("door-main-entrance", "Main Entrance", CHI, C_CHI_GROUND, 1, door({ dps: true, forcedAlarm: true, rex: true }));
const D_MAIN_EXIT = device("door-main-entrance-exit", "Main Entrance (exit reader)", CHI, C_CHI_GROUND, 2, {
  type: "additionalReader",
  primaryReader: D_MAIN,
});
const D_STAFF = device("door-staff-entrance", "Staff Entrance", CHI, C_CHI_GROUND, 3, door({ readerType: "touch", supportBleCredentials: true, dps: true, propAlarm: true, propDelay: 30 }));
const D_AMBULANCE = device("door-er-ambulance-bay", "Emergency Ambulance Bay", CHI, C_CHI_GROUND, 4, { publicIcon: "rollUpDoor", dwell: 300 });
const D_ER_STAFF = device("door-er-staff", "Emergency Dept Staff Door", CHI, C_CHI_GROUND, 5, door({ dps: true, forcedAlarm: true }));
const D_ER_INSIDE = device("door-er-staff-inside", "Emergency Dept Staff Door (inside reader)", CHI, C_CHI_GROUND, 6, {
  type: "additionalReader",
  primaryReader: D_ER_STAFF,
});
const D_LOADING = device("door-loading-dock", "Loading Dock", CHI, C_CHI_GROUND, 7, { publicIcon: "rollUpDoor", dwell: 600 });
const D_PLANT = device("door-plant-room", "Plant Room", CHI, C_CHI_GROUND, 8, door());
const D_RECORDS = device("door-medical-records", "Medical Records", CHI, C_CHI_GROUND, 9, door({ dps: true }));
const D_RADIOLOGY = device("door-radiology", "Radiology", CHI, C_CHI_GROUND, 10, door());
const D_PARKING = device("gate-staff-car-park", "Staff Car Park Gate", CHI, C_CHI_USB, 1, { publicIcon: "swingingGate", dwell: 80 });
device("io-ambulance-canopy-lights", "Ambulance Bay Canopy Lights", CHI, C_CHI_USB, 2, { type: "ioDevice", publicIcon: "light" });
// Chicago, upper floors
const D_WARD3 = device("door-ward-3", "Ward 3 (Medical)", CHI, C_CHI_UPPER, 1, door());
const D_WARD4 = device("door-ward-4", "Ward 4 (Surgical)", CHI, C_CHI_UPPER, 2, door());
const D_WARD5 = device("door-ward-5", "Ward 5 (Maternity)", CHI, C_CHI_UPPER, 3, door());
const D_NICU = device("door-nicu", "Neonatal ICU", CHI, C_CHI_UPPER, 4, door({
  inputTypes: ["encryptedOsdp"],
  osdpAddress: 1,
  securedReadsOnly: true,
  dps: true,
  forcedAlarm: true,
  propAlarm: true,
  propDelay: 20,
}));
const D_ICU = device("door-icu", "Intensive Care Unit", CHI, C_CHI_UPPER, 5, door({ dps: true }));
const D_OR = device("door-operating-theatres", "Operating Theatre Suite", CHI, C_CHI_UPPER, 6, door());
const D_LAB = device("door-pathology-lab", "Pathology Lab", CHI, C_CHI_UPPER, 7, door());
const D_PHARMACY = device("door-pharmacy", "Pharmacy", CHI, C_CHI_UPPER, 8, door({
  partition: devPart(P_SECURE),
  authenticationPolicy: "cardAndPin",
  dps: true,
  forcedAlarm: true,
  propAlarm: true,
  propDelay: 15,
}));
const D_SERVER = device("door-server-room", "Server Room", CHI, C_CHI_UPPER, 9, door({
  partition: devPart(P_SECURE),
  inputTypes: ["unencryptedOsdp", "encryptedOsdp"],
  osdpAddress: 2,
  dps: true,
  forcedAlarm: true,
}));
const D_EXEC = device("door-executive-suite", "Executive Suite (8th floor)", CHI, C_CHI_UPPER, 10, door({ supportBleCredentials: true }));
// Chicago, lift A: one elevator reader in the car, one relay per floor button.
const D_LIFT = device("lift-a-reader", "Lift A car reader", CHI, C_CHI_LIFT, 1, { type: "elevatorReader", publicIcon: "other" });
const FLOOR_NAMES = ["Lobby", "Outpatients", "Ward 3", "Ward 4", "Ward 5", "ICU and Theatres", "Laboratories", "Executive"];
const FLOORS = FLOOR_NAMES.map((label, i) =>
  device(`lift-a-floor-${i + 1}`, `Lift A floor ${i + 1} (${label})`, CHI, C_CHI_LIFT, i + 2, { type: "floorRelay" }),
);
// London annex
const D_LON_RECEPTION = device("door-lon-reception", "Annex Reception", LON, C_LON_USB, 1, {
  ...door({ partition: devPart(P_LONDON), rex: true }),
});
const D_LON_CLINIC = device("door-lon-clinic", "Annex Outpatient Clinic", LON, C_LON_CTRL, 1, door({ partition: devPart(P_LONDON) }));
const D_LON_RECORDS = device("door-lon-records-store", "Annex Records Store", LON, C_LON_CTRL, 2, door({ partition: devPart(P_LONDON), dps: true }));
const D_LON_STAFF = device("door-lon-staff-room", "Annex Staff Room", LON, C_LON_CTRL, 3, door({ partition: devPart(P_LONDON) }));

// ---------------------------------------------------------------------------------------------------
// Floor groups

const FG_PUBLIC = "fg-public-floors";
const FG_WARDS = "fg-wards-3-5";
const FG_CLINICAL = "fg-clinical-6-7";
const FG_EXEC = "fg-executive-8";
const floorGroups = [
  { id: FG_PUBLIC, name: "Public floors", partition: P_MAIN.id, readerPort: D_LIFT, floors: [FLOORS[0], FLOORS[1]] },
  { id: FG_WARDS, name: "Wards 3-5", partition: P_MAIN.id, readerPort: D_LIFT, floors: [FLOORS[2], FLOORS[3], FLOORS[4]] },
  { id: FG_CLINICAL, name: "ICU, Theatres and Labs 6-7", partition: P_MAIN.id, readerPort: D_LIFT, floors: [FLOORS[5], FLOORS[6]] },
  { id: FG_EXEC, name: "Executive 8", partition: P_MAIN.id, readerPort: D_LIFT, floors: [FLOORS[7]] },
];

// ---------------------------------------------------------------------------------------------------
// Groups

const G = {
  nurses: { id: "grp-nurses", name: "Nurses", partition: P_MAIN.id },
  doctors: { id: "grp-doctors", name: "Doctors", partition: P_MAIN.id },
  night: { id: "grp-night-shift", name: "Night shift", partition: P_MAIN.id },
  contractors: { id: "grp-contractors", name: "Contractors", partition: P_MAIN.id },
  facilities: { id: "grp-facilities", name: "Facilities", partition: P_MAIN.id },
  security: { id: "grp-security", name: "Security", partition: P_MAIN.id },
  executives: { id: "grp-executives", name: "Executives", partition: P_MAIN.id },
  admin: { id: "grp-administration", name: "Administration", partition: P_MAIN.id },
  visitors: { id: "grp-visitors", name: "Visitors", partition: P_MAIN.id },
  pharmacy: { id: "grp-pharmacy", name: "Pharmacy", partition: P_SECURE.id },
  it: { id: "grp-it", name: "IT", partition: P_SECURE.id },
  london: { id: "grp-london-annex-staff", name: "London Annex staff", partition: P_LONDON.id },
};
const groups = Object.values(G);

// ---------------------------------------------------------------------------------------------------
// Rules. Times are the node's local wall clock (Chicago or London).

const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri"];
const EVERY_DAY = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const rules = [];
function rule(id, name, group, fields) {
  rules.push({
    id,
    name,
    type: fields.floorGroups ? "elevator" : "door",
    groupId: group.id,
    ...(fields.floorGroups ? { floorGroups: fields.floorGroups } : { devices: fields.devices }),
    startTime: fields.startTime,
    stopTime: fields.stopTime,
    recurring: fields.recurring,
    allow: fields.allow ?? true,
    authenticationPolicy: fields.authenticationPolicy ?? null,
    enabled: fields.enabled ?? true,
    startDate: fields.startDate ?? null,
    endDate: fields.endDate ?? null,
  });
}
const ALL_DAY = { startTime: "00:00:00", stopTime: "24:00:00", recurring: EVERY_DAY };
const WARDS = [D_WARD3, D_WARD4, D_WARD5, D_NICU, D_ICU];
const PERIMETER = [D_MAIN, D_MAIN_EXIT, D_STAFF, D_AMBULANCE, D_ER_STAFF, D_ER_INSIDE, D_LOADING, D_PARKING];

rule("rule-nurses-day-weekdays", "Nurses: wards and entrances, weekday day shift", G.nurses, {
  devices: [D_MAIN, D_MAIN_EXIT, D_STAFF, ...WARDS, D_ER_STAFF, D_ER_INSIDE],
  startTime: "06:30:00",
  stopTime: "19:30:00",
  recurring: WEEKDAYS,
});
rule("rule-nurses-lift-weekdays", "Nurses: lift to public floors and wards, weekdays", G.nurses, {
  floorGroups: [FG_PUBLIC, FG_WARDS],
  startTime: "06:30:00",
  stopTime: "19:30:00",
  recurring: WEEKDAYS,
});
rule("rule-doctors-day-weekdays", "Doctors: clinical areas, weekdays", G.doctors, {
  devices: [D_MAIN, D_MAIN_EXIT, D_STAFF, ...WARDS, D_OR, D_LAB, D_RADIOLOGY, D_RECORDS, D_PARKING],
  startTime: "06:00:00",
  stopTime: "20:00:00",
  recurring: WEEKDAYS,
});
rule("rule-doctors-lift-weekdays", "Doctors: lift to public, ward and clinical floors, weekdays", G.doctors, {
  floorGroups: [FG_PUBLIC, FG_WARDS, FG_CLINICAL],
  startTime: "06:00:00",
  stopTime: "20:00:00",
  recurring: WEEKDAYS,
});
rule("rule-doctors-emergency-24x7", "Doctors: emergency department, on call 24x7", G.doctors, {
  devices: [D_AMBULANCE, D_ER_STAFF, D_ER_INSIDE],
  ...ALL_DAY,
});
rule("rule-doctors-london-clinic", "Doctors: London annex clinic, Tue and Thu", G.doctors, {
  devices: [D_LON_RECEPTION, D_LON_CLINIC],
  startTime: "09:00:00",
  stopTime: "17:00:00",
  recurring: ["Tue", "Thu"],
});
rule("rule-night-shift-fri-wards", "Night shift: wards, Friday night into Saturday", G.night, {
  devices: WARDS,
  startTime: "22:00:00",
  stopTime: "06:00:00",
  recurring: ["Fri"],
});
rule("rule-night-shift-overnight", "Night shift: entrances, every night 22:00-06:00", G.night, {
  devices: [D_MAIN, D_MAIN_EXIT, D_STAFF, D_ER_STAFF, D_ER_INSIDE],
  startTime: "22:00:00",
  stopTime: "06:00:00",
  recurring: EVERY_DAY,
});
rule("rule-night-shift-lift-overnight", "Night shift: lift to wards, every night 22:00-06:00", G.night, {
  floorGroups: [FG_PUBLIC, FG_WARDS],
  startTime: "22:00:00",
  stopTime: "06:00:00",
  recurring: EVERY_DAY,
});
rule("rule-facilities-24x7", "Facilities: plant, dock and entrances, 24x7", G.facilities, {
  devices: [...PERIMETER, D_PLANT, D_RADIOLOGY, D_LAB],
  ...ALL_DAY,
});
rule("rule-facilities-lift-24x7", "Facilities: lift to every floor, 24x7", G.facilities, {
  floorGroups: [FG_PUBLIC, FG_WARDS, FG_CLINICAL, FG_EXEC],
  ...ALL_DAY,
});
rule("rule-security-24x7", "Security: perimeter doors, 24x7", G.security, {
  devices: [...PERIMETER, D_RECORDS, D_PLANT],
  ...ALL_DAY,
});
rule("rule-security-lift-24x7", "Security: lift to every floor, 24x7", G.security, {
  floorGroups: [FG_PUBLIC, FG_WARDS, FG_CLINICAL, FG_EXEC],
  ...ALL_DAY,
});
rule("rule-contractors-weekdays", "Contractors: service areas, weekday working hours", G.contractors, {
  devices: [D_LOADING, D_PLANT, D_MAIN, D_MAIN_EXIT],
  startTime: "07:00:00",
  stopTime: "18:00:00",
  recurring: WEEKDAYS,
});
rule("rule-contractors-ward-4-refurb", "Contractors: Ward 4 refurbishment (spring 2026 only)", G.contractors, {
  devices: [D_WARD4],
  startTime: "08:00:00",
  stopTime: "17:00:00",
  recurring: WEEKDAYS,
  startDate: "2026-04-06",
  endDate: "2026-05-29",
});
rule("rule-contractors-deny-secure", "Contractors: never in the pharmacy or server room", G.contractors, {
  devices: [D_PHARMACY, D_SERVER],
  ...ALL_DAY,
  allow: false,
});
rule("rule-pharmacy-daily", "Pharmacy: dispensary and entrances, 07:00-21:00 daily", G.pharmacy, {
  devices: [D_PHARMACY, D_STAFF, D_MAIN, D_MAIN_EXIT],
  startTime: "07:00:00",
  stopTime: "21:00:00",
  recurring: EVERY_DAY,
});
rule("rule-it-server-room-24x7", "IT: server room, on call 24x7", G.it, {
  devices: [D_SERVER],
  ...ALL_DAY,
});
rule("rule-it-weekdays", "IT: entrances and records, weekdays", G.it, {
  devices: [D_MAIN, D_MAIN_EXIT, D_STAFF, D_RECORDS],
  startTime: "07:00:00",
  stopTime: "19:00:00",
  recurring: WEEKDAYS,
});
rule("rule-executives-weekdays", "Executives: suite, entrances and car park, weekdays", G.executives, {
  devices: [D_EXEC, D_MAIN, D_MAIN_EXIT, D_STAFF, D_PARKING],
  startTime: "07:00:00",
  stopTime: "20:00:00",
  recurring: WEEKDAYS,
});
rule("rule-executives-lift-weekdays", "Executives: lift to public floors and the 8th, weekdays", G.executives, {
  floorGroups: [FG_PUBLIC, FG_EXEC],
  startTime: "07:00:00",
  stopTime: "20:00:00",
  recurring: WEEKDAYS,
});
rule("rule-admin-weekdays", "Administration: records and entrances, weekday office hours", G.admin, {
  devices: [D_RECORDS, D_MAIN, D_MAIN_EXIT, D_STAFF],
  startTime: "08:00:00",
  stopTime: "18:00:00",
  recurring: WEEKDAYS,
});
rule("rule-admin-records-saturday-legacy", "Administration: Saturday records access (retired)", G.admin, {
  devices: [D_RECORDS],
  startTime: "09:00:00",
  stopTime: "13:00:00",
  recurring: ["Sat"],
  enabled: false,
});
rule("rule-visitors-daytime", "Visitors: main entrance, visiting hours", G.visitors, {
  devices: [D_MAIN, D_MAIN_EXIT],
  startTime: "09:00:00",
  stopTime: "20:00:00",
  recurring: EVERY_DAY,
  authenticationPolicy: "cardOnly",
});
rule("rule-visitors-lift-daytime", "Visitors: lift to public floors and wards, visiting hours", G.visitors, {
  floorGroups: [FG_PUBLIC, FG_WARDS],
  startTime: "09:00:00",
  stopTime: "20:00:00",
  recurring: EVERY_DAY,
});
rule("rule-london-staff-weekdays", "London Annex staff: annex doors, weekdays", G.london, {
  devices: [D_LON_RECEPTION, D_LON_CLINIC, D_LON_RECORDS, D_LON_STAFF],
  startTime: "08:00:00",
  stopTime: "18:00:00",
  recurring: WEEKDAYS,
});

// ---------------------------------------------------------------------------------------------------
// Holders

const FIRST = [
  "Maria", "James", "Aisha", "Wei", "Olivia", "Mateo", "Fatima", "Liam", "Sofia", "Noah", "Chloe", "Ethan",
  "Amara", "Lucas", "Hannah", "Diego", "Grace", "Omar", "Isabella", "Daniel", "Mei", "Samuel", "Zara", "Benjamin",
  "Priya", "Jacob", "Leila", "Michael", "Yuki", "David", "Ava", "Kofi", "Emily", "Rafael", "Nadia", "Thomas",
  "Ingrid", "Arjun", "Rosa", "Patrick", "Chen", "Elena", "Marcus", "Anika", "Joseph", "Lucia", "Tariq", "Megan",
  "Ibrahim", "Claire", "Hiroshi", "Bridget", "Andre", "Siobhan", "Viktor", "Ngozi", "Connor", "Alejandra",
  "Dmitri", "Keisha", "Ravi", "Eleanor", "Jamal", "Freya", "Tomasz", "Imani", "Gabriel", "Harriet", "Kenji",
  "Beatriz", "Declan", "Esperanza", "Malik", "Annelise",
];
const LAST = [
  "Alvarez", "Johnson", "Nguyen", "Patel", "Okafor", "Kowalski", "Murphy", "Garcia", "Chen", "Williams", "Haddad",
  "Schmidt", "Rossi", "Kim", "O'Brien", "Mensah", "Novak", "Hernandez", "Singh", "Brown", "Tanaka", "Dubois",
  "Ivanova", "Adeyemi", "Larsen", "Martinez", "Cohen", "Walsh", "Kaur", "Lindqvist", "Moreno", "Fitzgerald",
  "Yamamoto", "Abara", "Sullivan", "Petrov", "Jackson", "Ramirez", "Costa", "Nakamura", "Andersen", "Baptiste",
  "Mwangi", "Reyes", "Campbell", "Wozniak", "Delgado", "Hussain", "Bianchi", "Sorensen", "Oyelaran", "McAllister",
  "Castellanos", "Villanueva-Ortiz", "Van der Berg", "Nakagawa", "Thompson", "Dlamini", "Kapoor", "Horvath",
];
const CARD_MODELS = ["HID ProxCard II", "HID ISOProx II", "HID ProxKey III fob", "HID DuoProx II"];
const PHONE_MODELS = ["iPhone 15", "iPhone 13", "Pixel 8", "Galaxy S23", "Galaxy A54", "Apple Watch Series 9"];

const usedNumbers = new Set([7001, 7002, 7003]); // e-cards are not holder credentials
const usedEmails = new Set();
const holders = [];

function email(first, last) {
  const base = `${first}.${last}`.toLowerCase().normalize("NFKD").replace(/[^a-z.-]/g, "");
  let e = `${base}@${DOMAIN}`;
  for (let n = 2; usedEmails.has(e); n++) e = `${base}${n}@${DOMAIN}`;
  usedEmails.add(e);
  return e;
}
function card(holderId, k, number, facilityCode, description = pick(CARD_MODELS)) {
  if (usedNumbers.has(number)) throw new Error(`credential number ${number} used twice`);
  usedNumbers.add(number);
  return { id: `cred-${holderId.slice(7)}-${k}`, credentialNumber: number, facilityCode, description, types: ["card"] };
}
let nextDigital = 900001;
function digital(holderId, k, types, pending = false) {
  const c = {
    id: `cred-${holderId.slice(7)}-${k}`,
    credentialNumber: pending ? null : nextDigital++,
    facilityCode: null,
    description: pending ? "Pending" : pick(PHONE_MODELS),
    types,
  };
  if (c.credentialNumber !== null) usedNumbers.add(c.credentialNumber);
  return c;
}
function holder(n, first, last, fields) {
  const id = `holder-${pad(n, 4)}`;
  const h = {
    id,
    firstName: first,
    lastName: last,
    email: email(first, last),
    partition: fields.partition ?? P_MAIN.id,
    enabled: fields.enabled ?? true,
    activeDate: fields.activeDate ?? null,
    expireDate: fields.expireDate ?? null,
    pin: fields.pin ?? null,
    duressPin: fields.duressPin ?? null,
    groups: fields.groups.map((g) => g.id),
    credentials: (fields.credentials ?? []).map((make, k) => make(id, k + 1)),
  };
  holders.push(h);
  return h;
}
const cardOf = (number, facilityCode = 17, description) => (id, k) => card(id, k, number, facilityCode, description);
const mobileOf = (types, pending = false) => (id, k) => digital(id, k, types, pending);

// Featured holders: examples/requests.jsonl scans with these. Keep them stable.
holder(1, "Maria", "Alvarez", { groups: [G.nurses], pin: "2468", credentials: [cardOf(10234, 17, "HID ProxCard II")] });
holder(2, "Kwame", "Mensah", { groups: [G.nurses, G.night], credentials: [cardOf(11876, 17, "HID ProxCard II")] });
holder(3, "Priya", "Raman", {
  partition: P_SECURE.id,
  groups: [G.pharmacy],
  pin: "4821",
  duressPin: "4829",
  credentials: [cardOf(20417, 17, "HID DuoProx II")],
});
holder(4, "Dale", "Kowalski", {
  groups: [G.contractors],
  activeDate: "2026-01-05T07:00:00",
  expireDate: "2026-12-19T00:00:00",
  credentials: [cardOf(30555, 17, "Contractor badge (HID ProxCard II)")],
});
holder(5, "Hannah", "Schmidt", {
  groups: [G.doctors],
  pin: "7350",
  credentials: [cardOf(12001, 17, "HID DuoProx II"), (id, k) => ({ ...digital(id, k, ["touch", "token"]), description: "iPhone 15" })],
});
holder(6, "Luis", "Ortega", { groups: [G.facilities], credentials: [cardOf(15030, 17, "HID ProxKey III fob")] });
holder(7, "Margaret", "Okafor", {
  groups: [G.executives],
  pin: "1905",
  credentials: [cardOf(12500, 17, "HID DuoProx II"), (id, k) => ({ ...digital(id, k, ["token"]), description: "Galaxy S23" })],
});
holder(8, "Oliver", "Bennett", { partition: P_LONDON.id, groups: [G.london], credentials: [cardOf(31337, 42, "HID ISOProx II")] });
holder(9, "Aisha", "Karimi", {
  groups: [G.doctors],
  credentials: [cardOf(12077, 17, "HID DuoProx II"), mobileOf(["touch", "token"], true)],
});
holder(10, "Trevor", "Blake", { groups: [G.nurses], enabled: false, credentials: [cardOf(10990, 17, "HID ProxCard II")] });
holder(11, "Grace", "Liu", {
  groups: [G.visitors],
  activeDate: "2026-04-13T09:00:00",
  expireDate: "2026-04-14T20:00:00",
  credentials: [cardOf(40012, 17, "Visitor badge")],
});
holder(12, "Samuel", "Osei", {
  partition: P_SECURE.id,
  groups: [G.it],
  pin: "5530",
  duressPin: "5539",
  credentials: [cardOf(21060, 17, "HID DuoProx II"), (id, k) => ({ ...digital(id, k, ["touch", "token"]), description: "Pixel 8" })],
});
const FEATURED = holders.length;

// Generated staff. Roles by weight; the group sets are what a hospital hands out.
const ROLES = [
  { w: 78, groups: () => (chance(0.22) ? [G.nurses, G.night] : [G.nurses]) },
  { w: 40, groups: () => (chance(0.12) ? [G.doctors, G.night] : [G.doctors]) },
  { w: 28, groups: () => [G.admin] },
  { w: 16, groups: () => [G.facilities] },
  { w: 10, groups: () => [G.security] },
  { w: 12, groups: () => [G.contractors], contractor: true },
  { w: 14, groups: () => [G.visitors], visitor: true },
  { w: 8, groups: () => [G.pharmacy], secure: true },
  { w: 9, groups: () => (chance(0.3) ? [G.it, G.admin] : [G.it]), secure: true },
  { w: 6, groups: () => [G.executives] },
  { w: 22, groups: () => [G.london], london: true },
];
const totalWeight = ROLES.reduce((s, r) => s + r.w, 0);
function role() {
  let x = random() * totalWeight;
  for (const r of ROLES) if ((x -= r.w) < 0) return r;
  return ROLES[ROLES.length - 1];
}
function freshNumber() {
  for (;;) {
    const n = int(10000, 59999);
    if (!usedNumbers.has(n)) return n;
  }
}
const stamp = (y, m, d, hh = 0) => `${y}-${pad(m, 2)}-${pad(d, 2)}T${pad(hh, 2)}:00:00`;

for (let n = FEATURED + 1; n <= HOLDER_COUNT; n++) {
  const r = role();
  const first = pick(FIRST);
  const last = pick(LAST);
  const f = { groups: r.groups(), credentials: [] };
  if (r.london) f.partition = P_LONDON.id;
  if (r.secure) f.partition = P_SECURE.id;
  const fc = r.london ? 42 : chance(0.06) ? 12 : 17; // FC 12: cards from the old badge printer
  f.credentials.push(cardOf(freshNumber(), fc, r.visitor ? "Visitor badge" : r.contractor ? "Contractor badge (HID ProxCard II)" : undefined));
  if (!r.visitor && chance(0.04)) f.credentials.push(cardOf(freshNumber(), fc, "HID ProxKey III fob"));
  if (!r.visitor && !r.contractor && chance(0.12)) {
    const types = pick([["touch", "token"], ["touch", "token"], ["token"], ["touch"]]);
    f.credentials.push(mobileOf(types, chance(0.15)));
  }
  if (!r.visitor && chance(r.secure ? 0.9 : 0.35)) {
    f.pin = digits(pick([4, 4, 4, 5, 6]));
    if (chance(0.3)) {
      let d;
      do d = digits(f.pin.length);
      while (d === f.pin);
      f.duressPin = d;
    }
  }
  if (r.visitor) {
    const m = int(3, 6);
    const d = int(1, 25);
    f.activeDate = stamp(2026, m, d, 9);
    f.expireDate = stamp(2026, m, d + int(1, 3), 20);
  } else if (r.contractor) {
    f.activeDate = stamp(2026, int(1, 3), int(1, 28), 7);
    f.expireDate = stamp(2026, int(6, 12), int(1, 28));
  } else if (chance(0.03)) {
    f.activeDate = stamp(2026, int(5, 9), 1, 7); // starters
  } else if (chance(0.03)) {
    f.expireDate = stamp(2026, int(1, 8), int(1, 28)); // leavers
  }
  if (chance(0.025)) f.enabled = false;
  holder(n, first, last, f);
}

// ---------------------------------------------------------------------------------------------------
// Snapshot

const snapshot = {
  format: "rsop-system/1",
  systemId: SYSTEM_ID,
  timezone: "America/Chicago",
  partitions,
  groups,
  holders,
  cloudNodes,
  connections,
  devices,
  floorGroups,
  rules,
};

const out = process.argv[2] ?? fileURLToPath(new URL("./building.json", import.meta.url));
writeFileSync(out, `${JSON.stringify(snapshot, null, 2)}\n`);
process.stdout.write(
  `wrote ${out}: ${holders.length} holders, ${groups.length} groups, ${devices.length} devices, ${floorGroups.length} floor groups, ${rules.length} rules\n`,
);
