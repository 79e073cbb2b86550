import type { ASTVisitor, FieldNode, GraphQLField, GraphQLNamedType, SelectionSetNode, ValidationContext } from 'graphql';
import { getNamedType, getNullableType, GraphQLError, GraphQLList, isObjectType, isInterfaceType, Kind } from './graphql-lib.js';

/** Cost limits of a query (docs/graphql.md, "Limits"). */
export interface ComplexityLimits {
  /** SVC_GRAPHQL_COMPLEXITY_MAX. */
  readonly complexityMax: number;
  /** The multiplier of a list field without a literal `limit` (or `k`). */
  readonly listSizeDefault: number;
}

/** A list field's multiplier: its literal limit/k argument, else the default (a variable counts as the default). */
function multiplier(node: FieldNode, field: GraphQLField<unknown, unknown>, limits: ComplexityLimits): number {
  if (!(getNullableType(field.type) instanceof GraphQLList)) return 1;
  const arg = node.arguments?.find((a) => a.name.value === 'limit' || a.name.value === 'k');
  if (arg && arg.value.kind === Kind.INT) return Math.max(1, Number(arg.value.value));
  return limits.listSizeDefault;
}

/** One operation's cost walk: each fragment's cost is computed once (a doubling chain of spreads stays linear). */
interface CostWalk {
  readonly context: ValidationContext;
  readonly limits: ComplexityLimits;
  readonly fragmentCosts: Map<string, number>;
  /** Fragments being walked: a cycle (refused by graphql's own rule) counts 0 instead of looping. */
  readonly walking: Set<string>;
}

/** A fragment's cost, memoized by name. */
function fragmentCost(walk: CostWalk, name: string, depth: number): number {
  const known = walk.fragmentCosts.get(name);
  if (known !== undefined) return known;
  if (walk.walking.has(name)) return 0;
  const fragment = walk.context.getFragment(name);
  const on = fragment ? walk.context.getSchema().getType(fragment.typeCondition.name.value) : undefined;
  if (!fragment || !on) return 0;
  walk.walking.add(name);
  const cost = costOf(walk, fragment.selectionSet, on, depth + 1);
  walk.walking.delete(name);
  walk.fragmentCosts.set(name, cost);
  return cost;
}

/**
 * The cost of a selection: each field costs 1, and a list field multiplies the cost of what it
 * selects by its size (its limit, or the default). Stops as soon as it passes complexityMax.
 */
function costOf(walk: CostWalk, set: SelectionSetNode | undefined, type: GraphQLNamedType, depth: number): number {
  if (!set || depth > 64) return 0;
  const { context, limits } = walk;
  let total = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!isObjectType(type) && !isInterfaceType(type)) continue;
      const field = type.getFields()[selection.name.value];
      if (!field) continue;
      total += 1 + multiplier(selection, field, limits) * costOf(walk, selection.selectionSet, getNamedType(field.type), depth + 1);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const on = selection.typeCondition ? context.getSchema().getType(selection.typeCondition.name.value) : type;
      total += costOf(walk, selection.selectionSet, on ?? type, depth + 1);
    } else {
      total += fragmentCost(walk, selection.name.value, depth);
    }
    // Already too costly: the rest cannot make it cheaper (every multiplier is at least 1).
    if (total > limits.complexityMax) return total;
  }
  return total;
}

/** A validation rule refusing an operation that costs more than complexityMax (extensions.code LIMIT_EXCEEDED). */
export function complexityRule(limits: ComplexityLimits): (context: ValidationContext) => ASTVisitor {
  return (context) => ({
    OperationDefinition(node) {
      const root =
        node.operation === 'query'
          ? context.getSchema().getQueryType()
          : node.operation === 'mutation'
            ? context.getSchema().getMutationType()
            : context.getSchema().getSubscriptionType();
      if (!root) return;
      const cost = costOf({ context, limits, fragmentCosts: new Map(), walking: new Set() }, node.selectionSet, root, 0);
      if (cost > limits.complexityMax) {
        context.reportError(
          new GraphQLError(
            `the query costs ${cost}, more than the limit of ${limits.complexityMax} (SVC_GRAPHQL_COMPLEXITY_MAX); ask for fewer fields or smaller limits`,
            {
              nodes: [node],
              extensions: { code: 'LIMIT_EXCEEDED', details: { limit: 'complexity', cost, complexity_max: limits.complexityMax } },
            },
          ),
        );
      }
    },
  });
}
