/**
 * The webhook template worker: renders nunjucks templates off the main thread, in a thread with
 * its own small heap (template-renderer.ts sets the limits), so a template that blows up memory
 * or loops ends its worker, never the server. Messages: {id, text, variables} -> {id, text} | {id, error}.
 */
import { parentPort } from 'node:worker_threads';
import { isSvcError } from '../../core/errors.js';
import { compileTemplate, type CompiledTemplate } from './template-sandbox.js';

/** Compiled templates kept (by text); a webhook's template is compiled once per worker. */
const COMPILED_MAX = 256;
const compiled = new Map<string, CompiledTemplate>();

function templateOf(text: string): CompiledTemplate {
  let template = compiled.get(text);
  if (!template) {
    if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value!);
    template = compileTemplate(text);
    compiled.set(text, template);
  }
  return template;
}

parentPort!.on('message', (message: { id: number; text: string; variables: Record<string, unknown> }) => {
  try {
    parentPort!.postMessage({ id: message.id, text: templateOf(message.text).render(message.variables) });
  } catch (error) {
    const code = isSvcError(error) ? error.code : 'VALIDATION_ERROR';
    parentPort!.postMessage({ id: message.id, error: { code, message: (error as Error).message } });
  }
});
