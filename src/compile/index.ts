// What the evaluate layer may use of the compile layer.
export * from "./compiledSystem.js";
export * from "./compileSnapshot.js";
export * from "./buildNodes.js";
export * from "./buildRules.js";
export * from "./buildReach.js";
export * from "./buildHolders.js";
export * from "./buildCredentials.js";
export * from "./compileCardFormat.js";
export * from "./compileWindow.js";
export * from "./holderOrderState.js";
export * from "./holderOrder.js";
export * from "./policyMask.js";
export * from "./zoneTable.js";
export * from "./updateCompiled.js";
