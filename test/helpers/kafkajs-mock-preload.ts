/**
 * TEST ONLY. A Node preload (`node --import dist/test/helpers/kafkajs-mock-preload.js ...`, or
 * through NODE_OPTIONS: see kafkajsMockPreloadEnv) that applies kafkajs-mock-patch.ts in a child
 * process, e.g. a `svcdb serve` whose Kafka sink talks to the librdkafka mock cluster.
 */
import { patchKafkajsForMockCluster } from './kafkajs-mock-patch.js';

patchKafkajsForMockCluster();
