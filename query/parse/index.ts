/** query/parse: SQL text to statements (node-sql-parser behind one adapter file). */
export type { AstNode, CustomStatement, ExplainOptions, ParsedStatement, QualifiedName } from './ast.js';
export {
  DISTINCT_FN,
  LIMIT_PARAM_BASE,
  literalValue,
  NATURAL_MARKER,
  FRAME_CODE_BASE,
  FRAME_CODES,
  STR_PREFIX,
  NUM_FN,
  OP_FN,
  PK_MARKER,
  ROWSET_FN,
  VECTOR_MARKER,
  WINDOW_FN,
} from './preprocess.js';
export { astTemplateCounts, exprSql, parseExpression, parseSql, renameIdentifier, viewQueryText } from './sql-parser.js';
export { decodedScale, EXTRACT_FN } from './expr-rewrites.js';
export { lineColumn, syntaxError } from './tokens.js';
