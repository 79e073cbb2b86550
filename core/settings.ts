import type { SettingSpec } from './setting-spec.js';
import { GRAPHQL_SETTINGS } from './settings-graphql.js';
import { HTTP_SETTINGS } from './settings-http.js';
import { QUERY_SETTINGS } from './settings-query.js';
import { SERVER_SETTINGS } from './settings-server.js';
import { SINK_SETTINGS } from './settings-sinks.js';
import { VECTOR_SETTINGS } from './settings-vectors.js';

export type { SettingSpec, SettingType } from './setting-spec.js';

/**
 * Every setting of svcdb, in one table (kept in six parts by area, in this order). It drives the
 * environment variables, the CLI flags, the config file keys and `svcdb --help`, so the four can
 * never disagree. Precedence: flag > environment > config file > default.
 */
export const SETTINGS = [
  ...SERVER_SETTINGS,
  ...QUERY_SETTINGS,
  ...HTTP_SETTINGS,
  ...VECTOR_SETTINGS,
  ...SINK_SETTINGS,
  ...GRAPHQL_SETTINGS,
] as const satisfies readonly SettingSpec[];
