import type { ASTVisitor, FragmentDefinitionNode, SelectionSetNode, ValidationContext } from 'graphql';
import { GraphQLError, Kind } from './graphql-lib.js';

/** How deep a selection set goes (fields within fields), fragments followed once per path. */
function depthOf(set: SelectionSetNode | undefined, fragments: Record<string, FragmentDefinitionNode>, seen: ReadonlySet<string>): number {
  let deepest = 0;
  for (const selection of set?.selections ?? []) {
    if (selection.kind === Kind.FIELD) deepest = Math.max(deepest, selection.selectionSet ? 1 + depthOf(selection.selectionSet, fragments, seen) : 1);
    else if (selection.kind === Kind.INLINE_FRAGMENT) deepest = Math.max(deepest, depthOf(selection.selectionSet, fragments, seen));
    else if (!seen.has(selection.name.value)) {
      deepest = Math.max(deepest, depthOf(fragments[selection.name.value]?.selectionSet, fragments, new Set([...seen, selection.name.value])));
    }
  }
  return deepest;
}

/**
 * The depth limit as a validation rule (the WebSocket side; POST /graphql has mercurius's
 * queryDepth): LIMIT_EXCEEDED as over HTTP.
 */
export function depthRule(depthMax: number): (context: ValidationContext) => ASTVisitor {
  return (context) => ({
    OperationDefinition(node) {
      const fragments: Record<string, FragmentDefinitionNode> = {};
      for (const d of context.getDocument().definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
      // mercurius counts the root field as depth 0: the same count here.
      const depth = depthOf(node.selectionSet, fragments, new Set()) - 1;
      if (depth > depthMax) {
        context.reportError(
          new GraphQLError(`the query is ${depth} deep, more than the limit of ${depthMax} (SVC_GRAPHQL_DEPTH_MAX)`, {
            nodes: [node],
            extensions: { code: 'LIMIT_EXCEEDED', details: { limit: 'depth', depth_max: depthMax } },
          }),
        );
      }
    },
  });
}
