import { PGlite } from '@electric-sql/pglite';
import { POSTGRES_DIALECTS, type EngineResult, type SqlEngine } from './engine.js';

/**
 * Real PostgreSQL (PGlite, in-process WebAssembly) as a .slt engine. Every value is handed over as
 * PostgreSQL's text output (every type's parser is the identity), which is what
 * `run.mjs --engine pg` sees too, and the session time zone is UTC.
 */
export class PgliteEngine implements SqlEngine {
  readonly name = 'pglite';
  readonly dialects: ReadonlySet<string> = new Set([...POSTGRES_DIALECTS, 'pglite']);

  private constructor(
    private readonly db: PGlite,
    private readonly typeNames: Map<number, string>,
  ) {}

  static async create(): Promise<PgliteEngine> {
    // Parsers are set once for the database (PGlite merges per-query parsers on every call):
    // the identity for every built-in type; other types (oid >= 16384) come as text anyway.
    const rawParsers: Record<number, (value: string) => unknown> = {};
    for (let oid = 0; oid < FIRST_USER_OID; oid++) rawParsers[oid] = (value) => value;
    const db = new PGlite({ parsers: rawParsers });
    await db.waitReady;
    await db.exec(SESSION_SETUP);
    const types = await db.query<{ oid: string; typname: string }>('SELECT oid::int AS oid, typname FROM pg_type');
    const typeNames = new Map<number, string>(types.rows.map((t) => [Number(t.oid), t.typname]));
    return new PgliteEngine(db, typeNames);
  }

  /** Drops everything the previous file created: a fresh public schema and session. */
  async reset(): Promise<void> {
    await this.db.exec(`DROP SCHEMA public CASCADE; CREATE SCHEMA public; RESET ALL; ${SESSION_SETUP}`);
  }

  async execute(sql: string): Promise<EngineResult> {
    try {
      const result = await this.db.query<unknown[]>(sql, [], { rowMode: 'array' });
      return {
        kind: 'rows',
        columns: result.fields.map((f) => ({ name: f.name, type: this.typeNames.get(f.dataTypeID) ?? String(f.dataTypeID) })),
        rows: result.rows,
      };
    } catch (error) {
      const e = error as { message?: unknown; code?: unknown };
      if (typeof e.code !== 'string' || typeof e.message !== 'string') throw error; // not a PostgreSQL error
      return { kind: 'error', message: e.message };
    }
  }

  /** Runs several statements at once (simple protocol), for loading data. */
  async exec(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

const SESSION_SETUP = "SET TIME ZONE 'UTC';";
/** PostgreSQL's first oid for objects created after initdb. */
const FIRST_USER_OID = 16384;
