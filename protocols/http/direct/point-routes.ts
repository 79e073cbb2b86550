import type { CatalogState } from '../../../projections/index.js';
import type { SqlEngine } from '../../../query/index.js';
import type { AuthGate } from '../../auth/authenticate.js';
import type { QueryMetrics } from '../../metrics/query-metrics.js';
import { directQuery } from '../query/query-direct.js';
import type { QueryRouteLimits } from '../query/sql-body-schema.js';
import { directRow } from '../rows/row-direct.js';
import type { RowRouteLimits } from '../rows/rows-routes.js';
import { DirectAnswers, DirectDeclines, ROW_PREFIX, type DirectRoutes } from './direct-lane.js';

export interface PointRouteDeps {
  readonly engine: SqlEngine;
  readonly catalog: CatalogState;
  readonly limits: QueryRouteLimits & RowRouteLimits;
  /** The gate of /api/v1 (withAuth's): the direct path counts against the same rate limits. */
  readonly gate: AuthGate;
  readonly metrics?: QueryMetrics;
}

/** The direct path's routes (direct-lane.ts): GET of a row by id and a point SELECT over POST /query. */
export function pointRoutes(deps: PointRouteDeps): DirectRoutes {
  const { engine, catalog, limits } = deps;
  return {
    gate: deps.gate,
    answers: new DirectAnswers(),
    declines: new DirectDeclines(),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    row: directRow({ engine, catalog, limits }, ROW_PREFIX),
    query: directQuery(engine, limits),
  };
}
