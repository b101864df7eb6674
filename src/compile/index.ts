// What the evaluate layer may use of the compile layer.
export * from "./compileSnapshot.js";
export * from "./compileCardFormat.js";
export * from "./compileWindow.js";
export * from "./holderOrder.js";
export * from "./policyMask.js";
export * from "./zoneTable.js";
export * from "./updateCompiled.js";
