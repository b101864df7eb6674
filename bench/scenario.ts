// What every scenario file exports: `run(ctx)` returning rows of the results table.
import type { Row } from "./benchUtil.js";
import type { SizeName } from "./fixtures.js";

export interface ScenarioContext {
  /** Shorter time budgets and fewer repetitions (`npm run bench -- --quick`). */
  readonly quick: boolean;
  /** Sizes to run (scenarios that need one fixed size ignore this). */
  readonly sizes: readonly SizeName[];
  /** Facts a scenario hands to the report (agreement rates, counts), merged into latest.json. */
  readonly facts: Record<string, unknown>;
}

export type Scenario = (ctx: ScenarioContext) => Promise<Row[]>;
