/**
 * Webhook filters (sinks/webhooks/filter.ts, predicate.ts) on a real SQL engine over a real log:
 * events are written by SQL and read back through the change-event consumer, so values arrive in
 * their real JSON forms (bigint past 2^53 and numeric as strings, ISO timestamps, jsonb documents).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableDef } from '../../../core/catalog.js';
import type { WebhookFilter } from '../../../core/webhook.js';
import type { ChangeEvent, SourcedEvent } from '../../../sinks/events/change-event.js';
import { changeEvents, projectionEventSource } from '../../../sinks/index.js';
import { compileFilter, jsonEqual, type EventFilter } from '../../../sinks/webhooks/filter.js';
import { caught, openSql, type SqlHarness } from '../../query/helpers.js';

const ALL_OPS = ['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'SCHEMA_CHANGE'];
const BIG = '9007199254740993';

let h: SqlHarness;
let orders: TableDef;
let items: TableDef;
/** Every event of orders, in order: see beforeAll for what each is. */
let ev: SourcedEvent[];
let itemEvents: SourcedEvent[];

function tableDef(name: string): TableDef {
  return h.stack.projections.catalog.tableByName('default', 'public', name)!.def;
}

async function eventsOf(table: string): Promise<SourcedEvent[]> {
  const spec = {
    tenant: 'default',
    tableIds: [tableDef(table).id],
    objectKind: 'test',
    objectName: 'none',
    createdLsn: 1,
    createdSequence: -1n,
    snapshotRows: 0n,
  };
  const out: SourcedEvent[] = [];
  const options = { batchEventsMax: 100, batchBytesMax: 1 << 20, signal: new AbortController().signal, stopAtHead: true };
  for await (const batch of changeEvents(projectionEventSource(h.stack.projections), spec, { lsn: 1, afterSequence: -1n }, options)) out.push(...batch);
  return out;
}

function compile(filter: WebhookFilter | null, options: { tables?: TableDef[]; operations?: string[] } = {}): Promise<EventFilter> {
  return compileFilter({ engine: h.engine, tenant: 'default' }, { tables: options.tables ?? [orders], operations: options.operations ?? ALL_OPS, filter });
}

/** Which of the events pass, as their indexes. */
async function passing(filter: EventFilter, events: readonly SourcedEvent[]): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < events.length; i++) if (await filter.test(events[i]!)) out.push(i);
  return out;
}

const predicate = async (text: string, event: SourcedEvent): Promise<boolean> => (await compile({ predicate: text })).test(event);

/** An event built by hand on a table definition. */
function handmade(
  table: TableDef,
  operation: ChangeEvent['operation'],
  value: Record<string, unknown> | null,
  oldValue: Record<string, unknown> | null,
): SourcedEvent {
  const event: ChangeEvent = {
    event_id: '01KB0ZQ9W1C6M3V5J7D2A8X4RT',
    timestamp: '2026-01-01T00:00:00.000Z',
    sequence: 1,
    operation,
    database: 'default',
    table: table.name,
    key: null,
    value,
    old_value: oldValue,
    transaction_id: 't1',
  };
  return { event, lsn: 1, sequence: 1n, table };
}

beforeAll(async () => {
  h = await openSql();
  await h.q(`CREATE TABLE orders (id BIGINT PRIMARY KEY, n INTEGER, amount NUMERIC(12,2), status TEXT, at TIMESTAMPTZ,
    doc JSONB, paid BOOLEAN, "Odd Name" TEXT)`);
  await h.q('CREATE TABLE items (id INTEGER PRIMARY KEY, n INTEGER, status TEXT, label TEXT)');
  /* 0 */ // SCHEMA_CHANGE (CREATE)
  /* 1 */ await h.q(`INSERT INTO orders VALUES (${BIG}, 5, 12.50, 'pending', '2024-02-29T10:34:56.123456Z', '{"kind":"gift","tags":[1,2]}', false, 'x')`);
  /* 2 */ await h.q(`INSERT INTO orders (id, n, status) VALUES (9007199254740992, 20, 'paid')`);
  /* 3 */ await h.q(`UPDATE orders SET n = 7 WHERE id = ${BIG}`);
  /* 4 */ await h.q(`UPDATE orders SET status = 'paid', paid = true WHERE id = ${BIG}`);
  /* 5 */ await h.q(`UPDATE orders SET n = 3 WHERE id = ${BIG}`);
  /* 6 */ await h.q(`UPDATE orders SET n = 0 WHERE id = 9007199254740992`);
  /* 7 */ await h.q(`DELETE FROM orders WHERE id = ${BIG}`);
  /* 8 */ await h.q('TRUNCATE orders');
  /* 9 */ await h.q('ALTER TABLE orders ADD COLUMN note TEXT');
  /* 10 */ await h.q("INSERT INTO orders (id, n, note) VALUES (1, 50, 'after')");
  await h.q("INSERT INTO items VALUES (1, 5, 'paid', 'a')");
  orders = tableDef('orders');
  items = tableDef('items');
  ev = await eventsOf('orders');
  itemEvents = await eventsOf('items');
});

afterAll(async () => {
  await h?.close();
});

describe('the events under test', () => {
  it('are the real changes, in their JSON forms', () => {
    expect(ev.map((e) => e.event.operation)).toEqual([
      'SCHEMA_CHANGE',
      'INSERT',
      'INSERT',
      'UPDATE',
      'UPDATE',
      'UPDATE',
      'UPDATE',
      'DELETE',
      'TRUNCATE',
      'SCHEMA_CHANGE',
      'INSERT',
    ]);
    expect(ev[1]!.event.value).toMatchObject({ id: BIG, amount: '12.50', at: '2024-02-29T10:34:56.123456Z', doc: { kind: 'gift', tags: [1, 2] }, paid: false });
    // Events before the ALTER carry the old definition, the last one the current.
    expect(ev[1]!.table).not.toBe(orders);
    expect(ev[10]!.table.columns.map((c) => c.name)).toContain('note');
  });
});

describe('predicate', () => {
  it('bare names are the new row on INSERT and UPDATE, the old row on DELETE', async () => {
    const f = await compile({ predicate: 'n >= 5' });
    // INSERT n=5, INSERT n=20, UPDATE →7, UPDATE (n stays 7), UPDATE →3, UPDATE →0, DELETE (row n=3), INSERT n=50
    expect(await passing(f, ev)).toEqual([0, 1, 2, 3, 4, 8, 9, 10]);
    expect(await predicate('n = 3', ev[7]!)).toBe(true);
  });

  it('OLD.n < NEW.n as in a trigger WHEN clause; OLD is NULL on INSERT', async () => {
    const f = await compile({ predicate: 'OLD.n < NEW.n' }, { operations: ['INSERT', 'UPDATE', 'DELETE'] });
    // 3: 5→7 passes; 5: 7→3 and 6: 20→0 do not; INSERTs compare with NULL; DELETE compares the row with itself.
    expect(await passing(f, ev)).toEqual([3]);
    expect(await passing(await compile({ predicate: 'old.n > new.n' }), ev.slice(1, 8))).toEqual([4, 5]);
  });

  it("NEW.status = 'paid' AND OLD.status IS DISTINCT FROM 'paid': the transition into paid", async () => {
    const f = await compile({ predicate: "NEW.status = 'paid' AND OLD.status IS DISTINCT FROM 'paid'" }, { operations: ['INSERT', 'UPDATE'] });
    // 2: inserted as paid (OLD is NULL), 4: pending → paid; 5 and 6 stay paid.
    expect(await passing(f, ev)).toEqual([2, 4]);
  });

  it('AND binds tighter than OR', async () => {
    const f = await compile({ predicate: "NEW.status = 'paid' OR NEW.n > 5 AND OLD.n IS NULL" }, { operations: ['INSERT', 'UPDATE'] });
    // 2 and 4 to 6 are paid; 1 is an INSERT with n = 5 (not > 5); 3 is an UPDATE (OLD.n = 5); 10 an INSERT with n = 50.
    expect(await passing(f, ev)).toEqual([2, 4, 5, 6, 10]);
  });

  it('NULL filters out, as does false', async () => {
    const f = await compile({ predicate: "status = 'paid' OR status IS NULL AND false" });
    // 10 has status NULL: NULL OR (true AND false) = NULL OR false = NULL → filtered.
    expect(await f.test(ev[10]!)).toBe(false);
    expect(await predicate("status <> 'x'", ev[10]!)).toBe(false);
    expect(await predicate('status IS NULL', ev[10]!)).toBe(true);
  });

  it('reads every column type in its real form: bigint past 2^53, numeric, timestamptz, jsonb, boolean, quoted names', async () => {
    const insert = ev[1]!;
    expect(await predicate('id = 9007199254740993', insert)).toBe(true);
    expect(await predicate('id = 9007199254740992', insert)).toBe(false);
    expect(await predicate('id > 9007199254740992', insert)).toBe(true);
    expect(await predicate('amount = 12.5 AND amount < 12.51', insert)).toBe(true);
    expect(await predicate("at > '2024-02-29T10:34:56.123455Z' AND at < '2024-02-29T10:34:56.123457Z'", insert)).toBe(true);
    expect(await predicate("doc->>'kind' = 'gift' AND doc->'tags' @> '[2]'", insert)).toBe(true);
    expect(await predicate('NOT paid', insert)).toBe(true);
    expect(await predicate('paid', ev[4]!)).toBe(true);
    expect(await predicate(`"Odd Name" = 'x' AND upper(status) LIKE 'PEND%'`, insert)).toBe(true);
  });

  it('does not test TRUNCATE and SCHEMA_CHANGE: they pass', async () => {
    const f = await compile({ predicate: 'n > 1000' });
    expect(await passing(f, ev)).toEqual([0, 8, 9]);
  });

  it('evaluates events read with an older definition of the table: a column added since reads as NULL', async () => {
    const f = await compile({ predicate: "note = 'after' OR n = 5 AND note IS NULL" });
    expect(
      await passing(
        f,
        ev.filter((e) => e.event.operation === 'INSERT'),
      ),
    ).toEqual([0, 2]);
  });

  it('a hand-built event with missing fields reads them as NULL', async () => {
    const f = await compile({ predicate: 'n IS NULL AND OLD.status IS NULL' });
    expect(await f.test(handmade(orders, 'UPDATE', { id: 1 }, { id: 1 }))).toBe(true);
    expect(await f.test(handmade(orders, 'UPDATE', { id: 1, n: 1 }, { id: 1 }))).toBe(false);
  });

  it('a runtime error rejects with the engine error (the dispatcher dead-letters the event)', async () => {
    const f = await compile({ predicate: '100 / n > 1' });
    expect(await f.test(ev[3]!)).toBe(true);
    const err = await caught(f.test(ev[6]!));
    expect(err.message).toMatch(/division by zero/);
    expect(err.details).toMatchObject({ field: 'filter.predicate', table: 'orders', event_id: ev[6]!.event.event_id });
  });
});

describe('predicate refused at compile time', () => {
  const refused = async (text: string, tables: TableDef[] = [orders]) => {
    const err = await caught(compile({ predicate: text }, { tables }));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details.field).toBe('filter.predicate');
    return err;
  };

  it('an unknown column, with the engine message, naming the table', async () => {
    const err = await refused('nope > 1');
    expect(err.message).toMatch(/column "nope" does not exist/);
    expect(err.details.table).toBe('orders');
    expect((await refused('other.n > 1')).message).toMatch(/"other"/);
  });

  it('bad syntax and a result that is not boolean', async () => {
    await refused('n >');
    await refused('');
    expect((await refused('n + 1')).details).toMatchObject({ reason: 'not_boolean', type: 'INTEGER' });
  });

  it('injection attempts: a second statement, closing the generated parenthesis, comments, parameters, subqueries', async () => {
    const attempts = [
      '1=1; DROP TABLE orders',
      '1=1); DROP TABLE orders; SELECT (1',
      '1) OR (1=1',
      'true -- comment',
      'true /* ) AS ok FROM x */',
      '$1 = 1',
      'EXISTS (SELECT 1 FROM items)',
      'n IN (SELECT n FROM items)',
      'true) AS "ok" FROM (SELECT 1) AS "old" UNION SELECT (true',
      "status = 'a' UNION SELECT true",
    ];
    for (const text of attempts) {
      const err = await refused(text);
      expect(err.message).not.toBe('');
    }
    expect(await h.rows('SELECT count(*) AS c FROM orders')).toEqual([{ c: 1 }]);
    expect((await refused('1=1; DROP TABLE orders')).details.reason).toBe('semicolon');
    expect((await refused('true -- comment')).details.reason).toBe('comment');
    expect((await refused('1) OR (1=1')).details.reason).toBe('unbalanced');
  });

  it('a predicate longer than 4096 bytes', async () => {
    expect((await refused(`n = 1${' OR n = 1'.repeat(600)}`)).details.reason).toBe('too_long');
  });

  it('must not be something else than a string', async () => {
    await refused(42 as unknown as string);
  });
});

describe('multi-table webhooks', () => {
  it('a predicate that fits every table evaluates on each', async () => {
    const f = await compile({ predicate: "status = 'paid' AND n > 1" }, { tables: [orders, items] });
    expect(await f.test(itemEvents.at(-1)!)).toBe(true);
    expect(await passing(f, ev.slice(1, 3))).toEqual([1]);
  });

  it('a predicate that fails on one table is refused naming it', async () => {
    const err = await caught(compile({ predicate: 'amount > 1' }, { tables: [orders, items] }));
    expect(err).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'filter.predicate', table: 'items' } });
    expect(err.message).toMatch(/"items"/);
  });

  it('events of a table not in the webhook do not pass', async () => {
    const f = await compile(null, { tables: [orders] });
    expect(await f.test(itemEvents.at(-1)!)).toBe(false);
    expect(await f.test(ev[1]!)).toBe(true);
  });
});

describe('operations', () => {
  it('only the listed operations pass', async () => {
    const f = await compile(null, { operations: ['DELETE', 'TRUNCATE'] });
    expect(await passing(f, ev)).toEqual([7, 8]);
  });

  it('refuses unknown operations, SNAPSHOT and an empty list', async () => {
    for (const operations of [['INSERT', 'MERGE'], ['SNAPSHOT'], ['insert'], []]) {
      const err = await caught(compile(null, { operations }));
      expect(err).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'operations' } });
    }
  });
});

describe('columns', () => {
  it('an UPDATE of a listed table passes only when a listed column changed; other operations pass', async () => {
    const f = await compile({ columns: { orders: ['status', 'paid'] } });
    // UPDATEs 3, 5, 6 change only n; 4 changes status and paid.
    expect(await passing(f, ev)).toEqual([0, 1, 2, 4, 7, 8, 9, 10]);
    const byN = await compile({ columns: { 'public.orders': ['n'] } });
    expect(await passing(byN, ev.slice(3, 7))).toEqual([0, 2, 3]);
  });

  it('compares JSON values: jsonb documents in any key order, bigint strings', async () => {
    const f = await compile({ columns: { orders: ['doc', 'id'] } });
    expect(await f.test(handmade(orders, 'UPDATE', { id: BIG, doc: { a: 1, b: [1, { c: 2 }] } }, { id: BIG, doc: { b: [1, { c: 2 }], a: 1 } }))).toBe(false);
    expect(await f.test(handmade(orders, 'UPDATE', { id: BIG, doc: { a: 1 } }, { id: BIG, doc: { a: '1' } }))).toBe(true);
    expect(await f.test(handmade(orders, 'UPDATE', { id: BIG, doc: null }, { id: BIG }))).toBe(false);
    // The JSON forms are compared: numeric text that differs is a change.
    const byAmount = await compile({ columns: { orders: ['amount'] } });
    expect(await byAmount.test(handmade(orders, 'UPDATE', { id: 1, amount: '1.50' }, { id: 1, amount: '1.5' }))).toBe(true);
    expect(await byAmount.test(handmade(orders, 'UPDATE', { id: 1, amount: '1.50' }, { id: 1, amount: '1.50' }))).toBe(false);
    // An UPDATE without old_value cannot be compared: it passes.
    expect(await f.test(handmade(orders, 'UPDATE', { id: BIG }, null))).toBe(true);
  });

  it('combines with the predicate: both must hold', async () => {
    const f = await compile({ columns: { orders: ['n'] }, predicate: 'NEW.n < OLD.n' }, { operations: ['UPDATE'] });
    expect(await passing(f, ev)).toEqual([5, 6]);
  });

  it('refuses a table not in the webhook, a column the table lacks, an empty list', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ nope: ['n'] }, { table: 'nope' }],
      [{ items: ['n'] }, { table: 'items' }],
      [{ orders: ['n', 'nope'] }, { table: 'orders', column: 'nope' }],
      [{ orders: [] }, { table: 'orders' }],
      [{ orders: 'n' }, { table: 'orders' }],
    ];
    for (const [columns, details] of cases) {
      const err = await caught(compile({ columns } as WebhookFilter));
      expect(err).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'filter.columns', ...details } });
    }
  });

  it('refuses unknown filter fields', async () => {
    const err = await caught(compile({ where: 'n > 1' } as unknown as WebhookFilter));
    expect(err).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'filter' } });
  });
});

describe('jsonEqual', () => {
  it('is JSON equality', () => {
    expect(jsonEqual({ a: [1, null, 'x'], b: { c: true } }, { b: { c: true }, a: [1, null, 'x'] })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual('1', 1)).toBe(false);
  });
});

describe('micro-measure (printed, not asserted)', () => {
  it('evaluations per second of a predicate on UPDATE events', async () => {
    const f = await compile({ predicate: "OLD.n < NEW.n AND status = 'paid'" });
    const events = ev.slice(3, 7);
    const count = 10_000;
    // Warm-up: the JIT and the engine's plan cache.
    for (let i = 0; i < 3000; i++) await f.test(events[i % 4]!);
    const started = performance.now();
    for (let i = 0; i < count; i++) await f.test(events[i % 4]!);
    const ms = performance.now() - started;
    console.log(`webhook predicate: ${Math.round((count / ms) * 1000)} evaluations/s (${((ms * 1000) / count).toFixed(1)} µs each)`);
    expect(ms).toBeGreaterThan(0);
  });
});
