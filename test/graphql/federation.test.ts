import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { mercuriusFederationPlugin } from '@mercuriusjs/federation';
import mercuriusGateway from '@mercuriusjs/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { sql } from './client.js';

/** A second, tiny federated service: reviews of svcdb's authors (it extends svcdb's `authors` type). */
const REVIEWS = [
  { id: 'r1', body: 'superb', authorId: 1 },
  { id: 'r2', body: 'fine', authorId: 1 },
  { id: 'r3', body: 'odd', authorId: 2 },
];

async function reviewsService(): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(mercuriusFederationPlugin, {
    schema: `
      type Review @key(fields: "id") { id: ID! body: String author: authors }
      extend type authors @key(fields: "id") { id: Int! @external reviews: [Review!]! }
      extend type Query { reviews: [Review!]! }
    `,
    resolvers: {
      Query: { reviews: () => REVIEWS },
      Review: { author: (review: (typeof REVIEWS)[number]) => ({ __typename: 'authors', id: review.authorId }) },
      authors: { reviews: (author: { id: number }) => REVIEWS.filter((r) => r.authorId === author.id) },
    } as never,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

let server: TestServer;
let reviews: FastifyInstance;
let gateway: FastifyInstance;

beforeAll(async () => {
  server = await startTestServer();
  await sql(server, 'CREATE TABLE authors (id INT PRIMARY KEY, name TEXT)');
  await sql(server, "INSERT INTO authors VALUES (1, 'Ursula'), (2, 'Stanislaw')");
  reviews = await reviewsService();
  const auth = { authorization: `Bearer ${server.apiKey}` };
  gateway = Fastify({ logger: false });
  await gateway.register(mercuriusGateway as unknown as FastifyPluginAsync<Record<string, unknown>>, {
    gateway: {
      services: [
        { name: 'svcdb', url: `${server.baseUrl}/graphql`, initHeaders: auth, rewriteHeaders: () => auth },
        { name: 'reviews', url: `http://127.0.0.1:${(reviews.server.address() as { port: number }).port}/graphql` },
      ],
    },
  });
  await gateway.ready();
});

afterAll(async () => {
  await gateway?.close();
  await reviews?.close();
  await server?.close();
});

describe('federation through @mercuriusjs/gateway', () => {
  it('composes svcdb with another subgraph, resolving entities both ways', async () => {
    const query = '{ authors(order_by: {id: asc}) { name reviews { body } } reviews { body author { name } } }';
    const result = await gateway.inject({ method: 'POST', url: '/graphql', payload: { query } });
    expect(result.json()).toEqual({
      data: {
        authors: [
          { name: 'Ursula', reviews: [{ body: 'superb' }, { body: 'fine' }] },
          { name: 'Stanislaw', reviews: [{ body: 'odd' }] },
        ],
        reviews: [
          { body: 'superb', author: { name: 'Ursula' } },
          { body: 'fine', author: { name: 'Ursula' } },
          { body: 'odd', author: { name: 'Stanislaw' } },
        ],
      },
    });
  });
});
