import type { ExecutionArgs, ExecutionResult, ValidationRule } from 'graphql';
import type { Logger } from '../../core/logger.js';
import type { Principal } from '../auth/principal.js';
import type { GraphqlContext } from './context.js';
import { depthRule } from './depth.js';
import { execute } from './graphql-lib.js';
import { REQUEST_TIMEOUT_MS_DEFAULT } from './limits.js';
import { settleMutations } from './mutations/index.js';
import type { TenantSchemas } from './schema-cache.js';
import { principalScope, type ScopeDeps } from './scope.js';
import { subscribeOperation } from './subscriptions/index.js';
import type { ResolvedSchema } from './ws/index.js';

export interface WsSchemaDeps extends ScopeDeps {
  readonly schemas: TenantSchemas;
  readonly logger: Logger;
}

/**
 * The WebSocket transport's schema resolver: the principal's tenant schema (the one POST /graphql
 * serves, with its Subscription root) and, per operation, a request scope as over HTTP. A query or
 * mutation runs in one transaction committed (or rolled back) before its result is sent; each
 * evaluation of a live query gets a new scope (its own deadline).
 */
export function wsSchemaResolver(deps: WsSchemaDeps): (principal: Principal) => Promise<ResolvedSchema> {
  const depth = depthRule(deps.limits.graphqlDepthMax);
  const logInternal = (error: unknown): void => deps.logger.error({ err: error }, 'graphql resolver failed');
  return async (principal) => {
    const built = await deps.schemas.get(principal.tenant);
    const newScope = (signal: AbortSignal = new AbortController().signal) =>
      principalScope(deps, principal, {
        signal,
        deadlineMs: Date.now() + Math.min(REQUEST_TIMEOUT_MS_DEFAULT, deps.limits.queryTimeoutMsMax),
        logInternal,
      });
    const scope = newScope();
    const contextValue: GraphqlContext = { svc: scope, renew: newScope };
    const run = async (args: ExecutionArgs): Promise<ExecutionResult> => {
      try {
        return (await settleMutations(scope, await execute(args))) as ExecutionResult;
      } catch (error) {
        await scope.transaction?.abandon();
        throw error;
      }
    };
    const validationRules: ValidationRule[] = [...built.rules, depth];
    return { schema: built.schema, contextValue, validationRules, execute: run, subscribe: subscribeOperation };
  };
}
