// The slice of the raw snapshot JSON every peer model reads (they build their own structures from
// it, outside the timed path), and the clock parser they share.

export interface RawRule {
  id: string;
  type: "door" | "elevator";
  groupId: string;
  devices?: string[];
  floorGroups?: string[];
  startTime: string;
  stopTime: string;
  recurring: string[];
  allow?: boolean;
  authenticationPolicy?: string | null;
  enabled?: boolean;
  startDate?: string | null;
  endDate?: string | null;
}

export interface RawSnapshot {
  holders: { id: string; groups: string[] }[];
  floorGroups: { id: string; readerPort: string }[];
  rules: RawRule[];
}

/** `HH:mm:ss` → milliseconds since midnight. */
export function clockMs(clock: string): number {
  const [h, m, s] = clock.split(":").map(Number) as [number, number, number];
  return ((h * 60 + m) * 60 + s) * 1000;
}
