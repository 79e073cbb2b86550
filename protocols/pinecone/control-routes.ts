import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { engineScope } from '../auth/principal.js';
import {
  DEFAULT_SETTINGS,
  findIndex,
  INDEX_NAME_PATTERN,
  listIndexes,
  type IndexSettings,
  type IndexStore,
  type PineconeMetric,
  type VectorIndex,
} from './index-store.js';
import type { VectorCatalog } from '../vectors/vector-table.js';
import { canonical } from './field-names.js';
import { podParamsOf, podParamsSchema, specWithPodParams, type PodParams } from './pod-params.js';

/** Where a client sends an index's data-plane requests: this server, under /indexes/<name>. */
export function hostOf(request: FastifyRequest, name: string): string {
  return `${request.protocol}://${request.host}/indexes/${name}`;
}

function indexModel(request: FastifyRequest, index: VectorIndex, settings: IndexSettings): Record<string, unknown> {
  const spec = settings.spec ?? DEFAULT_SETTINGS.spec;
  return {
    name: index.name,
    dimension: index.dimension,
    metric: index.metric,
    host: hostOf(request, index.name),
    spec,
    ...podParamsOf(spec),
    status: { ready: true, state: 'Ready' },
    vector_type: 'dense',
    deletion_protection: settings.deletionProtection,
    ...(settings.tags === null ? {} : { tags: settings.tags }),
  };
}

interface CreateBody extends PodParams {
  name: string;
  dimension: number;
  metric: PineconeMetric;
  spec: unknown;
  deletion_protection: 'enabled' | 'disabled';
  tags?: Record<string, string>;
  vector_type?: 'dense' | 'sparse';
}

interface ConfigureBody {
  deletion_protection?: 'enabled' | 'disabled';
  tags?: Record<string, string>;
  spec?: unknown;
}

const nameParams = { type: 'object', required: ['index_name'], properties: { index_name: { type: 'string', minLength: 1, maxLength: 45 } } };
const tagsSchema = { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 120 } };

const createSchema = {
  type: 'object',
  required: ['name', 'dimension'],
  properties: {
    name: { type: 'string', pattern: INDEX_NAME_PATTERN.source },
    dimension: { type: 'integer', minimum: 1 },
    metric: { type: 'string', enum: ['cosine', 'euclidean', 'dotproduct'], default: 'cosine' },
    spec: { type: 'object' },
    deletion_protection: { type: 'string', enum: ['enabled', 'disabled'], default: 'disabled' },
    tags: tagsSchema,
    vector_type: { type: 'string', enum: ['dense', 'sparse'] },
    ...podParamsSchema,
  },
};

/**
 * What PATCH applies: deletion_protection and tags. Any other field (embed, ...) is refused by
 * propertyNames (removeAdditional would drop it silently); `spec` is refused unless unchanged.
 */
const configureSchema = {
  type: 'object',
  propertyNames: { enum: ['deletion_protection', 'tags', 'spec'] },
  properties: { deletion_protection: { type: 'string', enum: ['enabled', 'disabled'] }, tags: tagsSchema, spec: { type: 'object' } },
};

/** Pinecone's control plane: POST/GET /indexes, GET/PATCH/DELETE /indexes/{index_name}. */
export function controlRoutes(deps: { store: IndexStore; catalog: VectorCatalog }): FastifyPluginAsync {
  const { store, catalog } = deps;
  const scoped = (request: FastifyRequest) => ({ tenant: engineScope(request).tenant, run: store.runner(engineScope(request)) });
  const settingsOf = async (request: FastifyRequest, name: string): Promise<IndexSettings> => {
    const { tenant, run } = scoped(request);
    return (await store.settings(run, tenant)).get(name) ?? DEFAULT_SETTINGS;
  };
  return async (app) => {
    app.post<{ Body: CreateBody }>('/indexes', { schema: { body: createSchema } }, async (request, reply) => {
      const body = request.body;
      if (body.vector_type === 'sparse')
        throw new SvcError('VALIDATION_ERROR', 'sparse-only indexes are not supported; create a dense index (dotproduct for hybrid search)', {
          field: 'vector_type',
        });
      const { tenant, run } = scoped(request);
      const spec = specWithPodParams(body.spec, body) ?? DEFAULT_SETTINGS.spec;
      const settings: IndexSettings = { spec, deletionProtection: body.deletion_protection, tags: body.tags ?? null };
      await store.create(run, tenant, { name: body.name, dimension: body.dimension, metric: body.metric, settings });
      return reply.code(201).send(indexModel(request, findIndex(catalog, tenant, body.name), settings));
    });

    app.get('/indexes', async (request) => {
      const { tenant, run } = scoped(request);
      const settings = await store.settings(run, tenant);
      return { indexes: listIndexes(catalog, tenant).map((i) => indexModel(request, i, settings.get(i.name) ?? DEFAULT_SETTINGS)) };
    });

    app.get<{ Params: { index_name: string } }>('/indexes/:index_name', { schema: { params: nameParams } }, async (request) => {
      const index = findIndex(catalog, engineScope(request).tenant, request.params.index_name);
      return indexModel(request, index, await settingsOf(request, index.name));
    });

    app.patch<{ Params: { index_name: string }; Body: ConfigureBody }>(
      '/indexes/:index_name',
      { schema: { params: nameParams, body: configureSchema } },
      async (request) => {
        const index = findIndex(catalog, engineScope(request).tenant, request.params.index_name);
        const current = await settingsOf(request, index.name);
        const body = request.body ?? {};
        // Pods, replicas and pod types do not exist here: a spec change would be stored, echoed and ignored.
        if (body.spec !== undefined && canonical(body.spec) !== canonical(current.spec ?? DEFAULT_SETTINGS.spec)) {
          throw new SvcError(
            'VALIDATION_ERROR',
            `spec cannot be changed: svcdb serves index ${index.name} in-process (no pods, replicas or pod types to configure); configure deletion_protection and tags`,
            { field: 'spec' },
          );
        }
        const next: IndexSettings = {
          spec: current.spec,
          deletionProtection: body.deletion_protection ?? current.deletionProtection,
          tags: body.tags === undefined ? current.tags : { ...(current.tags ?? {}), ...body.tags },
        };
        await store.saveSettings(scoped(request).run, index.name, next);
        return indexModel(request, index, next);
      },
    );

    app.delete<{ Params: { index_name: string } }>('/indexes/:index_name', { schema: { params: nameParams } }, async (request, reply) => {
      const { tenant, run } = scoped(request);
      const index = findIndex(catalog, tenant, request.params.index_name);
      if ((await settingsOf(request, index.name)).deletionProtection === 'enabled') {
        throw new SvcError('INVALID_STATE', `Deletion protection is enabled for index ${index.name}; disable it with PATCH /indexes/${index.name}`, {
          index: index.name,
        });
      }
      await store.drop(run, tenant, index.name);
      // Pinecone answers 202; svcdb's drop is done when it answers, and the body is JSON as everywhere.
      return reply.code(202).send({});
    });
  };
}
