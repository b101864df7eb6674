// Bounded polling for tests that wait on another process, a server or a timer: one check every
// 20 ms, and an error naming what was awaited once the bound passes.

/** Waits until `check` holds, for at most `ms` ms. */
export type Until = (what: string, check: () => boolean | Promise<boolean>, ms?: number) => Promise<void>;

/** An `until` whose bound, unless a call gives its own, is `defaultMs`. */
export function pollUntil(defaultMs: number): Until {
  return async (what, check, ms = defaultMs) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
}
