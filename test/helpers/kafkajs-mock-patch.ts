/**
 * TEST ONLY — never imported by production code. Lets kafkajs's idempotent and transactional
 * producers work against librdkafka's mock cluster (test/helpers/kafka-mock.ts), which reports
 * controller id 0 while its brokers are numbered from 1: kafkajs asks "the controller" for a
 * producer id (InitProducerId, src/producer/eosManager/index.js) and fails with
 * "KafkaJSBrokerNotFound: Broker 0 not found in the cached metadata". The patch makes
 * Cluster#findControllerBroker (src/cluster/index.js) fall back to any connected broker when the
 * metadata's controller id is none of its brokers; a real cluster's lookup is left as it was.
 *
 * In a test: call patchKafkajsForMockCluster() before creating producers. In a child process (a
 * `node dist/bin/svcdb.js serve` a test spawns): pass kafkajsMockPreloadEnv() in its environment
 * (NODE_OPTIONS=--import=<dist/test/helpers/kafkajs-mock-preload.js>), or kafkajsMockPreloadArgs()
 * before the script.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface MetadataLike {
  readonly controllerId?: number | null;
  readonly brokers?: ReadonlyArray<{ readonly nodeId: number }>;
}

interface ClusterLike {
  readonly brokerPool: { readonly metadata?: MetadataLike | null; findConnectedBroker(): Promise<unknown> };
}

interface ClusterPrototype {
  findControllerBroker(this: ClusterLike): Promise<unknown>;
  [PATCHED]?: true;
}

const PATCHED = Symbol.for('svcdb.test.kafkajs-mock-patch');

/** The kafkajs Cluster class this process's `import 'kafkajs'` uses (the same module instance). */
function clusterPrototype(): ClusterPrototype {
  const require = createRequire(import.meta.url);
  const kafkajsMain = require.resolve('kafkajs');
  const cluster = require(path.join(path.dirname(kafkajsMain), 'src', 'cluster', 'index.js')) as { prototype: ClusterPrototype };
  return cluster.prototype;
}

/** Patches kafkajs's controller lookup for the mock cluster; idempotent. */
export function patchKafkajsForMockCluster(): void {
  const proto = clusterPrototype();
  if (proto[PATCHED]) return;
  const original = proto.findControllerBroker;
  proto.findControllerBroker = async function findControllerBroker(this: ClusterLike): Promise<unknown> {
    const metadata = this.brokerPool.metadata;
    const controllerId = metadata?.controllerId;
    const known = metadata?.brokers ?? [];
    if (controllerId !== null && controllerId !== undefined && known.length > 0 && !known.some((b) => b.nodeId === controllerId)) {
      return this.brokerPool.findConnectedBroker();
    }
    return original.call(this);
  };
  proto[PATCHED] = true;
}

/** Whether this process's kafkajs is patched (a child can report it; tests assert it). */
export function kafkajsMockPatchApplied(): boolean {
  return clusterPrototype()[PATCHED] === true;
}

/** The built preload module (npm test and `npm run build` compile test/ into dist/test/). */
export function kafkajsMockPreloadPath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  const preload = path.join(dir, 'dist', 'test', 'helpers', 'kafkajs-mock-preload.js');
  if (!existsSync(preload)) throw new Error(`${preload} is missing: run \`npm run build\` first (npm test does)`);
  return preload;
}

/** `node` arguments that load the patch before the script: `[...kafkajsMockPreloadArgs(), script, ...]`. */
export function kafkajsMockPreloadArgs(): string[] {
  return ['--import', pathToFileURL(kafkajsMockPreloadPath()).href];
}

/** Environment for a child node process: NODE_OPTIONS with the preload added to `base`'s. */
export function kafkajsMockPreloadEnv(base: NodeJS.ProcessEnv = process.env): { NODE_OPTIONS: string } {
  const own = `--import=${pathToFileURL(kafkajsMockPreloadPath()).href}`;
  const existing = base['NODE_OPTIONS']?.trim();
  return { NODE_OPTIONS: existing ? `${existing} ${own}` : own };
}
