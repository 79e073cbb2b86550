import type { ASTVisitor, FragmentDefinitionNode, SelectionSetNode, ValidationContext } from 'graphql';
import { GraphQLError, Kind } from './graphql-lib.js';

/** One operation's depth walk: each fragment's depth is computed once (a doubling chain of spreads stays linear). */
interface DepthWalk {
  readonly fragments: Record<string, FragmentDefinitionNode>;
  readonly fragmentDepths: Map<string, number>;
  /** Fragments being walked: a cycle (refused by graphql's own rule) counts 0 instead of looping. */
  readonly walking: Set<string>;
}

/** How deep a selection set goes (fields within fields), each fragment's depth memoized by name. */
function depthOf(walk: DepthWalk, set: SelectionSetNode | undefined): number {
  let deepest = 0;
  for (const selection of set?.selections ?? []) {
    if (selection.kind === Kind.FIELD) deepest = Math.max(deepest, selection.selectionSet ? 1 + depthOf(walk, selection.selectionSet) : 1);
    else if (selection.kind === Kind.INLINE_FRAGMENT) deepest = Math.max(deepest, depthOf(walk, selection.selectionSet));
    else deepest = Math.max(deepest, fragmentDepth(walk, selection.name.value));
  }
  return deepest;
}

/** A fragment's depth, memoized by name. */
function fragmentDepth(walk: DepthWalk, name: string): number {
  const known = walk.fragmentDepths.get(name);
  if (known !== undefined) return known;
  if (walk.walking.has(name)) return 0;
  walk.walking.add(name);
  const depth = depthOf(walk, walk.fragments[name]?.selectionSet);
  walk.walking.delete(name);
  walk.fragmentDepths.set(name, depth);
  return depth;
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
      const depth = depthOf({ fragments, fragmentDepths: new Map(), walking: new Set() }, node.selectionSet) - 1;
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
