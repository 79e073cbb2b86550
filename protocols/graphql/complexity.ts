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

/**
 * The cost of a selection: each field costs 1, and a list field multiplies the cost of what it
 * selects by its size (its limit, or the default). Fragments are followed once per use.
 */
function costOf(context: ValidationContext, set: SelectionSetNode | undefined, type: GraphQLNamedType, limits: ComplexityLimits, depth: number): number {
  if (!set || depth > 64) return 0;
  let total = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!isObjectType(type) && !isInterfaceType(type)) continue;
      const field = type.getFields()[selection.name.value];
      if (!field) continue;
      total += 1 + multiplier(selection, field, limits) * costOf(context, selection.selectionSet, getNamedType(field.type), limits, depth + 1);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const on = selection.typeCondition ? context.getSchema().getType(selection.typeCondition.name.value) : type;
      total += costOf(context, selection.selectionSet, on ?? type, limits, depth + 1);
    } else {
      const fragment = context.getFragment(selection.name.value);
      const on = fragment ? context.getSchema().getType(fragment.typeCondition.name.value) : undefined;
      if (fragment && on) total += costOf(context, fragment.selectionSet, on, limits, depth + 1);
    }
    if (total > Number.MAX_SAFE_INTEGER / 2) return total;
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
      const cost = costOf(context, node.selectionSet, root, limits, 0);
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
