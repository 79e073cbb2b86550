/**
 * One raw statement of PostgreSQL's grammar -> svcdb's StatementBody. Statements svcdb has no
 * executor for become { kind: 'unsupported', name } with PostgreSQL's name for them.
 */
import type {
  AlterTableStmt,
  CreateStmt,
  CreateTableAsStmt,
  DefElem,
  DropStmt,
  ExplainStmt,
  IndexStmt,
  Node,
  RefreshMatViewStmt,
  RenameStmt,
  SelectStmt,
  TransactionStmt,
  TruncateStmt,
  ViewStmt,
} from '@pgsql/types';
import { SvcError } from '../../../core/errors.js';
import type { ExplainOptions, StatementBody, TransactionStatement } from '../ast/index.js';
import { objectWord, translateAlterTable, words, translateDrop, translateRename, translateTruncate } from './alter.js';
import { defValue, translateCreateIndex, translateCreateTable, translateCreateTableAs, translateCreateView, translateRefresh } from './ddl.js';
import { dmlOf } from './dml.js';
import { tagOf } from './nodes.js';
import { selectStmt } from './query.js';

/** svcdb's StatementBody for one raw statement (a RawStmt or its `stmt`); `text` is the statement's own text. */
export function translateStatement(raw: Node, text: string): StatementBody {
  const first = tagOf(raw);
  const node = first[0] === 'RawStmt' ? (first[1] as { stmt: Node }).stmt : raw;
  const [tag, body] = tagOf(node);
  switch (tag) {
    case 'SelectStmt': {
      const s = body as SelectStmt;
      if (s.intoClause !== undefined) return unsupported('SELECT INTO');
      return { kind: 'query', query: selectStmt(s), loc: 0 };
    }
    case 'InsertStmt':
    case 'UpdateStmt':
    case 'DeleteStmt':
      return dmlOf(node);
    case 'CreateStmt':
      return translateCreateTable(body as CreateStmt);
    case 'CreateTableAsStmt':
      return translateCreateTableAs(body as CreateTableAsStmt, text);
    case 'IndexStmt':
      return translateCreateIndex(body as IndexStmt);
    case 'ViewStmt':
      return translateCreateView(body as ViewStmt, text);
    case 'RefreshMatViewStmt':
      return translateRefresh(body as RefreshMatViewStmt);
    case 'AlterTableStmt':
      return translateAlterTable(body as AlterTableStmt);
    case 'RenameStmt':
      return translateRename(body as RenameStmt);
    case 'DropStmt':
      return translateDrop(body as DropStmt);
    case 'TruncateStmt':
      return translateTruncate(body as TruncateStmt);
    case 'TransactionStmt':
      return translateTransaction(body as TransactionStmt);
    default:
      return unsupported(statementName(tag, body));
  }
}

function unsupported(name: string): StatementBody {
  return { kind: 'unsupported', name, loc: 0 };
}

const TRANSACTION_COMMANDS: Readonly<Record<string, TransactionStatement['command']>> = {
  TRANS_STMT_BEGIN: 'BEGIN',
  TRANS_STMT_START: 'BEGIN',
  TRANS_STMT_COMMIT: 'COMMIT',
  TRANS_STMT_ROLLBACK: 'ROLLBACK',
  TRANS_STMT_SAVEPOINT: 'SAVEPOINT',
  TRANS_STMT_RELEASE: 'RELEASE',
  TRANS_STMT_ROLLBACK_TO: 'ROLLBACK TO',
};

/** BEGIN/START TRANSACTION/COMMIT/END/ROLLBACK/ABORT/SAVEPOINT/RELEASE/ROLLBACK TO; two-phase commit is unsupported. */
function translateTransaction(t: TransactionStmt): StatementBody {
  const command = TRANSACTION_COMMANDS[t.kind ?? ''];
  if (command === undefined)
    return unsupported(t.kind === 'TRANS_STMT_PREPARE' ? 'PREPARE TRANSACTION' : (t.kind ?? '').replace(/^TRANS_STMT_/, '').replace(/_/g, ' '));
  if (t.chain === true) return unsupported(`${command} AND CHAIN`);
  const options = (t.options ?? []).map(transactionOption);
  return { kind: 'transaction', command, savepoint: t.savepoint_name ?? null, options, loc: t.location ?? 0 };
}

/** A transaction mode as written, lower case: "isolation level serializable", "read only", "not deferrable". */
function transactionOption(n: Node): string {
  const d = (n as { DefElem?: DefElem }).DefElem ?? {};
  const c = (d.arg as { A_Const?: { sval?: { sval?: string }; ival?: { ival?: number } } } | undefined)?.A_Const;
  const on = (c?.ival?.ival ?? 0) !== 0;
  switch (d.defname) {
    case 'transaction_isolation':
      return `isolation level ${c?.sval?.sval ?? ''}`;
    case 'transaction_read_only':
      return on ? 'read only' : 'read write';
    case 'transaction_deferrable':
      return on ? 'deferrable' : 'not deferrable';
    default:
      return d.defname ?? '';
  }
}

// PostgreSQL's command tags where the node's name does not spell them (CreateCommandName in tcop/utility.c).
const NAMES: Readonly<Record<string, string | ((b: Record<string, unknown>) => string)>> = {
  CopyStmt: 'COPY',
  VariableSetStmt: (b) => (String(b.kind ?? '').startsWith('VAR_RESET') ? 'RESET' : 'SET'),
  VariableShowStmt: 'SHOW',
  CreateFunctionStmt: (b) => (b.is_procedure === true ? 'CREATE PROCEDURE' : 'CREATE FUNCTION'),
  AlterFunctionStmt: 'ALTER FUNCTION',
  CreateSeqStmt: 'CREATE SEQUENCE',
  AlterSeqStmt: 'ALTER SEQUENCE',
  GrantStmt: (b) => (b.is_grant === true ? 'GRANT' : 'REVOKE'),
  GrantRoleStmt: (b) => (b.is_grant === true ? 'GRANT ROLE' : 'REVOKE ROLE'),
  VacuumStmt: (b) => (b.is_vacuumcmd === true ? 'VACUUM' : 'ANALYZE'),
  CommentStmt: 'COMMENT ON',
  CreateTrigStmt: 'CREATE TRIGGER',
  CompositeTypeStmt: 'CREATE TYPE',
  CreateEnumStmt: 'CREATE TYPE',
  CreateRangeStmt: 'CREATE TYPE',
  DefineStmt: (b) => `CREATE ${objectWord(b.kind as string | undefined)}`,
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  DeclareCursorStmt: 'DECLARE CURSOR',
  FetchStmt: (b) => (b.ismove === true ? 'MOVE' : 'FETCH'),
  ClosePortalStmt: 'CLOSE CURSOR',
  LockStmt: 'LOCK TABLE',
  CreatedbStmt: 'CREATE DATABASE',
  DropdbStmt: 'DROP DATABASE',
  AlterOwnerStmt: (b) => `ALTER ${objectWord(b.objectType as string | undefined)}`,
  AlterObjectSchemaStmt: (b) => `ALTER ${objectWord(b.objectType as string | undefined)}`,
  RuleStmt: 'CREATE RULE',
  CheckPointStmt: 'CHECKPOINT',
  ConstraintsSetStmt: 'SET CONSTRAINTS',
  DeallocateStmt: 'DEALLOCATE',
  ExplainStmt: 'EXPLAIN',
  CreateTableSpaceStmt: 'CREATE TABLESPACE',
  DropTableSpaceStmt: 'DROP TABLESPACE',
  CreatePLangStmt: 'CREATE LANGUAGE',
  CreateForeignTableStmt: 'CREATE FOREIGN TABLE',
  CreateStatsStmt: 'CREATE STATISTICS',
  DropOwnedStmt: 'DROP OWNED',
  ReassignOwnedStmt: 'REASSIGN OWNED',
  CreateCastStmt: 'CREATE CAST',
  CreateOpClassStmt: 'CREATE OPERATOR CLASS',
  CreateConversionStmt: 'CREATE CONVERSION',
  DoStmt: 'DO',
  CreateEventTrigStmt: 'CREATE EVENT TRIGGER',
  CreateFdwStmt: 'CREATE FOREIGN DATA WRAPPER',
  CreateForeignServerStmt: 'CREATE SERVER',
  SecLabelStmt: 'SECURITY LABEL',
  AlterEnumStmt: 'ALTER TYPE',
  CreateAmStmt: 'CREATE ACCESS METHOD',
  CreateOpFamilyStmt: 'CREATE OPERATOR FAMILY',
  AlterOpFamilyStmt: 'ALTER OPERATOR FAMILY',
  AlterTableMoveAllStmt: 'ALTER TABLE',
  AlterRoleSetStmt: 'ALTER ROLE',
  AlterDatabaseSetStmt: 'ALTER DATABASE',
  AlterExtensionContentsStmt: 'ALTER EXTENSION',
  AlterTSConfigurationStmt: 'ALTER TEXT SEARCH CONFIGURATION',
  AlterTSDictionaryStmt: 'ALTER TEXT SEARCH DICTIONARY',
};

/** PostgreSQL's name of a statement svcdb does not run: from the table above, else the node's words ("CreateSchemaStmt" -> "CREATE SCHEMA"). */
export function statementName(tag: string, body: Record<string, unknown>): string {
  const known = NAMES[tag];
  if (typeof known === 'string') return known;
  if (known !== undefined) return known(body);
  return words(tag.replace(/Stmt$/, ''));
}

/** EXPLAIN's options: ANALYZE [bool] and FORMAT TEXT|JSON|YAML; other options (VERBOSE, COSTS, ...) are accepted and ignored. */
export function explainOptions(raw: ExplainStmt): ExplainOptions {
  let analyze = false;
  let format: ExplainOptions['format'] = 'text';
  for (const n of raw.options ?? []) {
    const d = (n as { DefElem?: DefElem }).DefElem;
    if (d === undefined) continue;
    const value = defValue(d);
    if (d.defname === 'analyze') analyze = value !== false && !['false', 'off', '0', 'no'].includes(String(value).toLowerCase());
    if (d.defname === 'format') {
      const f = String(value).toLowerCase();
      if (f !== 'text' && f !== 'json' && f !== 'yaml')
        throw new SvcError('INVALID_QUERY', `EXPLAIN format "${f}" is not supported`, { reason: 'unsupported' });
      format = f;
    }
  }
  return { analyze, format };
}
