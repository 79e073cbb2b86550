/** Plan nodes (defined with the bound expressions in ir.ts). */
export * from './ir.js';
