import { conflicting } from './field-names.js';

/**
 * The spec's index parameters pods, replicas and pod_type (defaults 1, 1, p1.x1). svcdb serves
 * every index in-process, so they change nothing: they are accepted at the top level of a create
 * (the spec's names) or in spec.pod (where Pinecone's clients put them), kept in spec.pod, and
 * echoed at the top level of every index model.
 */
export interface PodParams {
  readonly pods?: number;
  readonly replicas?: number;
  readonly pod_type?: string;
}

export const POD_DEFAULTS = Object.freeze({ pods: 1, replicas: 1, pod_type: 'p1.x1' });

/** Pinecone's pod counts stay small; a bound keeps the stored spec small too. */
const PODS_MAX = 100;
/** Pinecone's pod types: s1, p1 or p2, in sizes x1, x2, x4, x8. */
const POD_TYPE_PATTERN = /^(s1|p1|p2)\.x(1|2|4|8)$/;

export const podParamsSchema = {
  pods: { type: 'integer', minimum: 1, maximum: PODS_MAX },
  replicas: { type: 'integer', minimum: 1, maximum: PODS_MAX },
  pod_type: { type: 'string', pattern: POD_TYPE_PATTERN.source },
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The spec a create stores: the body's spec with the top-level pod parameters put in spec.pod.
 * They describe a pod-based index, so beside a serverless spec they are 400; beside spec.pod a
 * parameter given twice must agree (field-names.ts's rule).
 */
export function specWithPodParams(spec: unknown, params: PodParams): unknown {
  const given = Object.entries({ pods: params.pods, replicas: params.replicas, pod_type: params.pod_type }).filter(([, v]) => v !== undefined);
  if (given.length === 0) return spec;
  const other = isObject(spec) ? Object.keys(spec).find((k) => k !== 'pod') : undefined;
  if (other !== undefined) throw conflicting(given.map(([k]) => k).join(', '), `spec.${other}`, 'pod parameters describe a pod-based index');
  const pod = isObject(spec) && isObject(spec['pod']) ? spec['pod'] : {};
  for (const [key, value] of given) {
    if (pod[key] !== undefined && pod[key] !== value) throw conflicting(key, `spec.pod.${key}`, 'two places for one parameter');
  }
  return { ...(isObject(spec) ? spec : {}), pod: { ...pod, ...Object.fromEntries(given) } };
}

/** The parameters an index model echoes: its spec.pod's, else the spec's defaults. */
export function podParamsOf(spec: unknown): Required<PodParams> {
  const pod = isObject(spec) && isObject(spec['pod']) ? spec['pod'] : {};
  const count = (value: unknown, fallback: number): number => (Number.isInteger(value) ? (value as number) : fallback);
  return {
    pods: count(pod['pods'], POD_DEFAULTS.pods),
    replicas: count(pod['replicas'], POD_DEFAULTS.replicas),
    pod_type: typeof pod['pod_type'] === 'string' ? pod['pod_type'] : POD_DEFAULTS.pod_type,
  };
}
