/**
 * svcdb's own CDC statements (PostgreSQL has no grammar for them), parsed from tokens:
 *
 *   CREATE CHANGE DATA CAPTURE ON <table> TO KAFKA '<brokers>' [TOPIC '<topic>'] [FORMAT JSON|AVRO]
 *     [AS '<name>'] [WITH (option = value, ...)]
 *   options: snapshot = true|false, operations = 'INSERT,UPDATE,...', columns = 'a,b', predicate = '<SQL condition>'
 *   CREATE CHANGE DATA CAPTURE ON <table> TO KINESIS '<stream>' REGION '<region>' [FORMAT ...] [AS ...] [WITH ...]
 *   SHOW CDC STREAMS
 *   SHOW CDC STREAM STATUS <name>
 *   ALTER CDC STREAM <name> PAUSE | RESUME
 *   DROP CHANGE DATA CAPTURE [IF EXISTS] <name>
 *
 * The clauses after the destination may come in any order, each at most once. A name is an
 * identifier or a string literal.
 */
import type { CdcStatement, QualifiedName } from './ast/index.js';
import type { Token } from './tokens.js';

/** Reports a syntax error at a token offset of the statement. */
export type SyntaxFail = (at: number, message: string) => never;

/** The CDC statement the tokens spell, or null when they start otherwise. Throws through `fail`. */
export function cdcStatement(tokens: readonly Token[], fail: SyntaxFail): CdcStatement | null {
  const p = new Cursor(tokens, fail);
  if (p.peekWords('create', 'change', 'data', 'capture')) return createStream(p);
  if (p.peekWords('drop', 'change', 'data', 'capture')) {
    p.skip(4);
    const ifExists = p.acceptWords('if', 'exists');
    const name = p.name('a stream name');
    p.end();
    return { kind: 'cdc_drop', name, ifExists };
  }
  if (p.peekWords('show', 'cdc')) {
    p.skip(2);
    if (p.acceptWords('streams')) {
      p.end();
      return { kind: 'cdc_show' };
    }
    p.expectWord('stream');
    p.expectWord('status');
    const name = p.name('a stream name');
    p.end();
    return { kind: 'cdc_status', name };
  }
  if (p.peekWords('alter', 'cdc', 'stream')) {
    p.skip(3);
    const name = p.name('a stream name');
    const action = p.oneOf(['pause', 'resume'], 'PAUSE or RESUME');
    p.end();
    return { kind: 'cdc_alter', name, action: action === 'pause' ? 'PAUSE' : 'RESUME' };
  }
  return null;
}

function createStream(p: Cursor): CdcStatement {
  p.skip(4);
  p.expectWord('on');
  const table = p.qualifiedName();
  p.expectWord('to');
  const target = p.oneOf(['kafka', 'kinesis'], 'KAFKA or KINESIS');
  const address = p.string(target === 'kafka' ? 'the broker list' : 'the stream name');
  const seen = new Set<string>();
  const clauses: { topic?: string; region?: string; format?: 'json' | 'avro'; name?: string; options?: WithOptions } = {};
  while (!p.atEnd()) {
    const at = p.offset();
    const word = p.oneOf(['topic', 'region', 'format', 'as', 'with'], 'TOPIC, REGION, FORMAT, AS, WITH or the end of the statement');
    if (seen.has(word)) p.fail(at, `${word.toUpperCase()} is given twice`);
    seen.add(word);
    if (word === 'topic') clauses.topic = p.string('a topic name');
    else if (word === 'region') clauses.region = p.string('a region');
    else if (word === 'format') clauses.format = p.oneOf(['json', 'avro'], 'JSON or AVRO') as 'json' | 'avro';
    else if (word === 'as') clauses.name = p.name('a stream name');
    else clauses.options = withOptions(p);
  }
  if (target === 'kafka' && clauses.region !== undefined) p.fail(p.offset(), 'REGION is for KINESIS streams; a KAFKA stream takes TOPIC');
  if (target === 'kinesis' && clauses.topic !== undefined) p.fail(p.offset(), 'TOPIC is for KAFKA streams; a KINESIS stream takes REGION');
  if (target === 'kinesis' && clauses.region === undefined) p.fail(p.offset(), "a KINESIS stream needs REGION '<region>'");
  return {
    kind: 'cdc_create',
    table,
    destination:
      target === 'kafka' ? { kind: 'kafka', brokers: address, topic: clauses.topic ?? null } : { kind: 'kinesis', stream: address, region: clauses.region! },
    format: clauses.format ?? 'json',
    name: clauses.name ?? null,
    snapshot: clauses.options?.snapshot ?? false,
    filter: clauses.options?.filter ?? null,
  };
}

interface WithOptions {
  snapshot: boolean;
  filter: { operations?: string[]; columns?: string[]; predicate?: string } | null;
}

/** WITH (snapshot = true|false, operations = '...', columns = '...', predicate = '...'), each at most once. */
function withOptions(p: Cursor): WithOptions {
  p.punct('(');
  const out: WithOptions = { snapshot: false, filter: null };
  const seen = new Set<string>();
  const filter: NonNullable<WithOptions['filter']> = {};
  for (;;) {
    const at = p.offset();
    const option = p.name('an option name').toLowerCase();
    if (seen.has(option)) p.fail(at, `option "${option}" is given twice`);
    seen.add(option);
    p.op('=');
    if (option === 'snapshot') out.snapshot = ['true', 'on'].includes(p.oneOf(['true', 'false', 'on', 'off'], 'true or false'));
    else if (option === 'operations') filter.operations = list(p.string('a list of operations')).map((o) => o.toUpperCase());
    else if (option === 'columns') filter.columns = list(p.string('a list of columns'));
    else if (option === 'predicate') filter.predicate = p.string('a SQL condition');
    else p.fail(at, `unknown option "${option}" (known: snapshot, operations, columns, predicate)`);
    if (p.acceptPunct(')')) break;
    p.punct(',');
  }
  if (Object.keys(filter).length > 0) out.filter = filter;
  return out;
}

const list = (text: string): string[] =>
  text
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

class Cursor {
  private i = 0;

  constructor(
    private readonly tokens: readonly Token[],
    readonly fail: SyntaxFail,
  ) {}

  offset(): number {
    return this.tokens[this.i]?.start ?? this.tokens[this.tokens.length - 1]?.end ?? 0;
  }

  atEnd(): boolean {
    return this.i >= this.tokens.length;
  }

  skip(n: number): void {
    this.i += n;
  }

  private word(at: number): string | null {
    const t = this.tokens[at];
    return t?.kind === 'ident' ? t.value : null;
  }

  peekWords(...words: string[]): boolean {
    return words.every((w, k) => this.word(this.i + k) === w);
  }

  acceptWords(...words: string[]): boolean {
    if (!this.peekWords(...words)) return false;
    this.i += words.length;
    return true;
  }

  previousWas(word: string): boolean {
    return this.word(this.i - 1) === word;
  }

  expectWord(word: string): void {
    if (!this.acceptWords(word)) this.unexpected(word.toUpperCase());
  }

  oneOf(words: readonly string[], what: string): string {
    const w = this.word(this.i);
    if (w === null || !words.includes(w)) this.unexpected(what);
    this.i++;
    return w!;
  }

  string(what: string): string {
    const t = this.tokens[this.i];
    if (t?.kind !== 'string') this.unexpected(`${what} as a string literal`);
    this.i++;
    if (t!.value.length === 0) this.fail(t!.start, `${what} must not be empty`);
    return t!.value;
  }

  /** An identifier (folded), a quoted identifier or a string literal. */
  name(what: string): string {
    const t = this.tokens[this.i];
    if (t?.kind !== 'ident' && t?.kind !== 'qident' && t?.kind !== 'string') this.unexpected(what);
    this.i++;
    if (t!.value.length === 0) this.fail(t!.start, `${what} must not be empty`);
    return t!.value;
  }

  qualifiedName(): QualifiedName {
    const first = this.name('a table name');
    if (!this.acceptPunct('.')) return { schema: null, name: first };
    return { schema: first, name: this.name('a table name') };
  }

  punct(value: string): void {
    if (!this.acceptPunct(value)) this.unexpected(`"${value}"`);
  }

  acceptPunct(value: string): boolean {
    const t = this.tokens[this.i];
    if (t?.kind !== 'punct' || t.value !== value) return false;
    this.i++;
    return true;
  }

  op(value: string): void {
    const t = this.tokens[this.i];
    if (t?.kind !== 'op' || t.value !== value) this.unexpected(`"${value}"`);
    this.i++;
  }

  end(): void {
    if (!this.atEnd()) this.unexpected('the end of the statement');
  }

  private unexpected(expected: string): never {
    const t = this.tokens[this.i];
    return this.fail(this.offset(), t ? `expected ${expected}, found "${t.text}"` : `expected ${expected} at end of input`);
  }
}
