// Which strings are IANA time zones, cached.
import { IANAZone } from "luxon";

/** Answers of isValidZone, oldest first; at most ZONE_CACHE_SIZE names, each at most MAX_ZONE_NAME long. */
const zoneValidity = new Map<string, boolean>();
const ZONE_CACHE_SIZE = 1024;
/** Longer than any IANA zone name (the longest has 32 characters): such a string is no zone. */
const MAX_ZONE_NAME = 64;

/**
 * True when `zone` is an IANA zone name luxon (ICU) knows. Cached (luxon builds an Intl formatter
 * per call), in a cache of bounded size that keeps no long string.
 */
export function isValidZone(zone: string): boolean {
  if (zone.length > MAX_ZONE_NAME) return false;
  let valid = zoneValidity.get(zone);
  if (valid === undefined) {
    valid = IANAZone.isValidZone(zone);
    if (zoneValidity.size >= ZONE_CACHE_SIZE) zoneValidity.delete(zoneValidity.keys().next().value as string);
    zoneValidity.set(zone, valid);
  }
  return valid;
}

/** How many answers isValidZone holds (internal: for tests of the bound). */
export function zoneCacheSize(): number {
  return zoneValidity.size;
}
