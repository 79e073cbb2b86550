import { EMPTY_CONTRIBUTION, type SchemaContribution } from '../contribution.js';
import type { SchemaModel } from '../model.js';

/** What subscriptions need from the server (the log tail, the engine…): filled in by the subscriptions work. */
export type SubscriptionDeps = Readonly<Record<string, unknown>>;

/** The subscription part of a tenant's schema: none yet (owned by the subscriptions work). */
export function subscriptionSchema(model: SchemaModel, deps: SubscriptionDeps): SchemaContribution {
  void model;
  void deps;
  return EMPTY_CONTRIBUTION;
}
