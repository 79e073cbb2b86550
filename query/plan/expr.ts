/** Bound expressions (defined with the plan nodes in ir.ts). */
export * from './ir.js';
