/**
 * The REST benchmarks' baseline server (bench/rest-http.ts): what fastify does with no database
 * behind it. GET / answers hello-world; POST /echo parses a JSON body and answers a small object;
 * GET /ndjson?rows=N streams N lines shaped like svcdb's stream rows. Usage: node fastify-baseline.js PORT
 */
import { Readable } from 'node:stream';
import Fastify from 'fastify';

const port = Number(process.argv[2]);
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.post('/echo', async (request) => ({ success: true, received: Object.keys(request.body as object).length }));
app.get<{ Querystring: { rows?: string } }>('/ndjson', async (request, reply) => {
  const rows = Number(request.query.rows ?? 1000);
  const batchRows = 1000;
  async function* lines(): AsyncIterable<string> {
    for (let start = 1; start <= rows; start += batchRows) {
      let chunk = '';
      for (let n = start; n < Math.min(start + batchRows, rows + 1); n++) chunk += `${JSON.stringify({ id: n, name: `name-${n}`, amount: n * 1.5 })}\n`;
      yield chunk;
    }
  }
  return reply.type('application/x-ndjson').send(Readable.from(lines()));
});
await app.listen({ port, host: '127.0.0.1' });
