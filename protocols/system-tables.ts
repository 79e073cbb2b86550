/**
 * Tables svcdb's protocols create for their own bookkeeping: GET /tables lists them only with
 * include_system=true (PostgreSQL's \dt leaves its catalogs out the same way). They are ordinary
 * tables otherwise (SQL reads them, the log holds them).
 */
import { DEFAULT_SCHEMA } from '../core/catalog.js';
import { REGISTRY_TABLE } from './pinecone/index-store.js';

/** `schema.name` of each system table. */
const SYSTEM_TABLES: ReadonlySet<string> = new Set([`${DEFAULT_SCHEMA}.${REGISTRY_TABLE}`]);

export function isSystemTable(schema: string, name: string): boolean {
  return SYSTEM_TABLES.has(`${schema}.${name}`);
}
