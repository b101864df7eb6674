// What the adapters may use of the evaluate layer.
export { Engine, createEngine, loadEngine, loadEngineOrThrow } from "./engine.js";
export { decide, newDecision } from "./decide.js";
