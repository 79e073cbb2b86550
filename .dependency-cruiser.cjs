/**
 * The layering of ARCHITECTURE.md, checked by test/architecture.test.ts (part of `npm test`):
 *
 *   core ← log ← projections ← query ← {protocols, sinks} ← bin
 *
 * A folder never imports from a folder to its right; protocols and sinks do not import each
 * other; core imports no other folder; no cycles. Type-only imports count: a type from a folder
 * to the right is a dependency on it all the same.
 */
const LAYERS = ['core', 'log', 'projections', 'query', 'protocols', 'sinks', 'bin'];

/** Folders to the right of `layer` (peers protocols/sinks are handled by their own rule). */
function rightOf(layer) {
  const index = LAYERS.indexOf(layer);
  const right = LAYERS.slice(index + 1);
  // protocols and sinks are one tier: "to the right" of query is both; of protocols only bin.
  return right.filter((folder) => !(layer === 'protocols' && folder === 'sinks'));
}

const folderRe = (folders) => `^(${folders.join('|')})/`;

const layerRules = ['log', 'projections', 'query', 'protocols', 'sinks'].map((layer) => ({
  name: `${layer}-not-to-right`,
  comment: `${layer}/ must not import ${rightOf(layer).join(', ')} (imports flow core ← log ← projections ← query ← {protocols, sinks} ← bin)`,
  severity: 'error',
  from: { path: `^${layer}/` },
  to: { path: folderRe(rightOf(layer)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-imports-no-folder',
      comment: 'core/ is the shared vocabulary: it imports no other folder of svcdb',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: folderRe(['log', 'projections', 'query', 'protocols', 'sinks', 'bin', 'bench', 'test']) },
    },
    ...layerRules,
    {
      name: 'protocols-not-to-sinks',
      comment: 'protocols/ and sinks/ are peers: they do not import each other',
      severity: 'error',
      from: { path: '^protocols/' },
      to: { path: '^sinks/' },
    },
    {
      name: 'sinks-not-to-protocols',
      comment: 'protocols/ and sinks/ are peers: they do not import each other',
      severity: 'error',
      from: { path: '^sinks/' },
      to: { path: '^protocols/' },
    },
    {
      name: 'nothing-imports-tests-or-bench',
      comment: 'production code does not depend on test/ or bench/',
      severity: 'error',
      from: { path: folderRe(LAYERS) },
      to: { path: folderRe(['test', 'bench']) },
    },
    {
      name: 'no-circular',
      comment: 'a cycle makes two modules one; split out what they share',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'through-index',
      comment: 'use another folder through its index.ts, not its internals (core has no index: its files are the vocabulary)',
      severity: 'warn',
      from: { path: '^(log|projections|query|protocols|sinks|bin)/' },
      to: {
        path: '^(log|projections|query|protocols|sinks)/',
        pathNot: ['^$1/', '^(log|projections|query|protocols|sinks)/index\\.ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|coverage|\\.tmp)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
