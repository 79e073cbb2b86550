/** A parser node, mutable: the fix rewrites chains in place (the parser's tree is ours until returned). */
type Node = Record<string, unknown>;

/**
 * node-sql-parser (5.x, PostgreSQL dialect) gives AND and OR the same precedence: `a OR b AND c`
 * parses as `(a OR b) AND c` in WHERE, ON, HAVING and inside parentheses, and `a AND b OR c` as
 * `a AND (b OR c)` in a select list. PostgreSQL binds AND tighter than OR. The parser keeps the
 * operands in source order and marks what was written in parentheses (`parentheses: true`), so
 * each chain of unparenthesized AND/OR nodes is read back in order and regrouped: an OR of AND
 * groups, both left-associative (the regrouped AND groups are marked parenthesized, so an
 * expression printed back from the tree, e.g. a CHECK, says what it means).
 */
export function fixAndOrPrecedence(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) fixAndOrPrecedence(item);
    return;
  }
  const obj = node as Node;
  if (!isLogical(obj)) {
    for (const value of Object.values(obj)) fixAndOrPrecedence(value);
    return;
  }
  const operands: unknown[] = [];
  const operators: string[] = [];
  flatten(obj.left, operands, operators);
  operators.push(String(obj.operator).toUpperCase());
  flatten(obj.right, operands, operators);
  for (const operand of operands) fixAndOrPrecedence(operand);
  const regrouped = regroup(operands, operators);
  obj.operator = regrouped.operator;
  obj.left = regrouped.left;
  obj.right = regrouped.right;
}

function isLogical(node: unknown): node is Node {
  if (node === null || typeof node !== 'object') return false;
  const obj = node as Node;
  if (obj.type !== 'binary_expr' || typeof obj.operator !== 'string') return false;
  const op = obj.operator.toUpperCase();
  return op === 'AND' || op === 'OR';
}

/** Operands and operators of an unparenthesized AND/OR chain, in source order. */
function flatten(node: unknown, operands: unknown[], operators: string[]): void {
  if (!isLogical(node) || node.parentheses === true) {
    operands.push(node);
    return;
  }
  flatten(node.left, operands, operators);
  operators.push(String(node.operator).toUpperCase());
  flatten(node.right, operands, operators);
}

function logical(operator: string, left: unknown, right: unknown, parentheses: boolean): Node {
  return parentheses ? { type: 'binary_expr', operator, left, right, parentheses: true } : { type: 'binary_expr', operator, left, right };
}

/** `operands[0] operators[0] operands[1] …` with AND before OR, left to right. */
function regroup(operands: readonly unknown[], operators: readonly string[]): Node {
  const groups: unknown[][] = [[operands[0]]];
  operators.forEach((op, i) => {
    if (op === 'AND') groups.at(-1)!.push(operands[i + 1]);
    else groups.push([operands[i + 1]]);
  });
  const several = groups.length > 1;
  const anded = groups.map((g) => g.slice(1).reduce((left, right, i) => logical('AND', left, right, several && i === g.length - 2), g[0]));
  return anded.slice(1).reduce<unknown>((left, right) => logical('OR', left, right, false), anded[0]) as Node;
}
