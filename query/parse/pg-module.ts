/**
 * libpg-query (PostgreSQL's own parser, WebAssembly), loaded once per process before any statement
 * (~1 s); its parse and scan functions are synchronous after that. Only query/parse imports it.
 */
import { loadModule } from 'libpg-query';

await loadModule();

export { parseSync, scanSync } from 'libpg-query';
export type { Node, ParseResult } from 'libpg-query';
