/**
 * The linter and the formatter under `npm test` (issue 17): ESLint (eslint.config.js, type-aware
 * typescript-eslint rules) must report nothing, and every file Prettier formats must already be
 * formatted (.prettierrc.json, .prettierignore). `npm run lint` and `npm run format` fix the tree.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ESLint } from 'eslint';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
/** Type-aware linting builds the whole TypeScript program: tens of seconds on a loaded machine. */
const LINT_TIMEOUT_MS = 600_000;
/** Folders never walked: dependencies, build output, data and VCS internals. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', 'data', 'coverage', '.tmp']);
const IGNORE_PATHS = [join(ROOT, '.gitignore'), join(ROOT, '.prettierignore')];

/** One line per ESLint message: `path:line:column rule message`. */
function eslintFindings(results: ESLint.LintResult[]): string[] {
  return results.flatMap((result) =>
    result.messages.map((m) => `${relative(ROOT, result.filePath)}:${m.line}:${m.column} ${m.ruleId ?? '(parse)'} ${m.message}`),
  );
}

/** Every file below `dir`, skipping SKIPPED_DIRS (Prettier's own ignore files decide the rest). */
async function walk(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) files.push(...(await walk(path)));
    } else if (entry.isFile()) {
      files.push(path);
    }
  }
  return files;
}

/** The files `prettier --check .` would check and finds unformatted, relative to the root. */
async function unformattedFiles(): Promise<{ checked: number; unformatted: string[] }> {
  let checked = 0;
  const unformatted: string[] = [];
  for (const file of await walk(ROOT)) {
    const info = await prettier.getFileInfo(file, { ignorePath: IGNORE_PATHS });
    if (info.ignored || info.inferredParser === null) continue;
    const options = (await prettier.resolveConfig(file, { editorconfig: false })) ?? {};
    checked++;
    if (!(await prettier.check(await readFile(file, 'utf8'), { ...options, filepath: file }))) unformatted.push(relative(ROOT, file));
  }
  return { checked, unformatted };
}

describe('lint and format (eslint.config.js, .prettierrc.json)', () => {
  it('ESLint reports nothing over the tree', { timeout: LINT_TIMEOUT_MS }, async () => {
    const eslint = new ESLint({ cwd: ROOT, errorOnUnmatchedPattern: true });
    const results = await eslint.lintFiles(['.']);
    const findings = eslintFindings(results);
    expect(findings, `npm run lint:\n  ${findings.join('\n  ')}`).toEqual([]);
    // The walk really covered the source folders.
    expect(results.filter((r) => r.filePath.startsWith(join(ROOT, 'query'))).length).toBeGreaterThan(10);
  });

  it('the type-aware rules catch a floating promise, a misused promise and a thrown non-Error', { timeout: LINT_TIMEOUT_MS }, async () => {
    // Linted as the text of an existing project file, so the type-aware rules see it with types.
    const code = [
      'async function work(): Promise<number> { return 1; }',
      'export function run(list: number[]): void {',
      '  work();',
      '  list.forEach(async () => { await work(); });',
      "  if (list.length === 0) throw 'empty';",
      '}',
      '',
    ].join('\n');
    const eslint = new ESLint({ cwd: ROOT });
    const [result] = await eslint.lintText(code, { filePath: join(ROOT, 'test/lint.test.ts') });
    const rules = new Set(result?.messages.map((m) => m.ruleId));
    expect([...rules].sort()).toEqual([
      '@typescript-eslint/no-floating-promises',
      '@typescript-eslint/no-misused-promises',
      '@typescript-eslint/only-throw-error',
    ]);
  });

  // Fails until the tree is formatted once (`npm run format`, one commit): it tolerates nothing.
  it('every file Prettier formats is formatted', { timeout: LINT_TIMEOUT_MS }, async () => {
    const { checked, unformatted } = await unformattedFiles();
    expect(checked).toBeGreaterThan(100);
    expect(unformatted, `npm run format would change:\n  ${unformatted.join('\n  ')}`).toEqual([]);
  });
});
