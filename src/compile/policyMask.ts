// Authentication policies as bitmasks over factor combinations: combining two policies
// is a bitwise AND, accepting a combination is a bit test.
import type { AuthenticationPolicy } from "../model/index.js";

/** Factor combinations, one bit each. */
export const FACTOR = { card: 1, pin: 2, cardAndPin: 4 } as const;

/** Which combinations each policy accepts; `null` (no policy) accepts all. */
export function policyMask(policy: AuthenticationPolicy | null): number {
  switch (policy) {
    case null:
    case "cardOrPin":
      return FACTOR.card | FACTOR.pin | FACTOR.cardAndPin;
    case "cardOnly":
      return FACTOR.card | FACTOR.cardAndPin;
    case "pinOnly":
      return FACTOR.pin | FACTOR.cardAndPin;
    case "cardAndPin":
      return FACTOR.cardAndPin;
  }
}
