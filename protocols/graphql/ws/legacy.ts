/**
 * The legacy subscriptions-transport-ws protocol (subprotocol `graphql-ws`), still spoken by
 * older Apollo clients: connection_init → connection_ack and `ka` every keep-alive interval (or
 * connection_error, then the close of graphql-ws's convention); start → data… complete (or error);
 * stop ends an operation (complete follows); connection_terminate closes.
 */
import type { ExecutionResult } from 'graphql';
import { SvcError } from '../../../core/errors.js';
import { authenticateWs, closeCodeOf, closeReasonOf, credentialsOf } from './auth.js';
import { formatError, formatResult, graphqlErrorOf, svcErrorOf } from './errors.js';
import { prepareOperation, runOperation, type OperationPayload } from './operation.js';
import type { TransportDeps, TransportExtra } from './transport-ws.js';
import type { BoundedSocket } from './socket.js';

interface Message {
  readonly type?: unknown;
  readonly id?: unknown;
  readonly payload?: unknown;
}

/** One legacy connection; returns its end (call on close). */
export class LegacyConnection {
  /** Running operations by id: return() ends one. */
  readonly operations = new Map<string, AsyncIterator<ExecutionResult> | null>();
  private acknowledged = false;
  private initReceived = false;
  private readonly initTimer: NodeJS.Timeout;

  constructor(
    private readonly socket: BoundedSocket,
    private readonly extra: TransportExtra,
    private readonly deps: TransportDeps,
  ) {
    this.initTimer = setTimeout(() => {
      if (!this.initReceived) socket.close(4408, 'Connection initialisation timeout');
    }, deps.connectionInitTimeoutMs);
    this.initTimer.unref();
    socket.raw.on('message', (data) => {
      this.onMessage(String(data)).catch((error: unknown) => {
        deps.onInternalError(error);
        socket.close(1011, 'internal error');
      });
    });
  }

  /** Ends every operation (the socket closed). */
  async closed(): Promise<void> {
    clearTimeout(this.initTimer);
    const running = [...this.operations.values()];
    this.operations.clear();
    await Promise.all(running.map((it) => Promise.resolve(it?.return?.()).catch(() => undefined)));
  }

  private send(type: string, id?: string, payload?: unknown): Promise<void> {
    return this.socket.send(JSON.stringify({ type, ...(id === undefined ? {} : { id }), ...(payload === undefined ? {} : { payload }) }));
  }

  private async onMessage(text: string): Promise<void> {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return this.send('error', undefined, { message: 'message is not JSON' });
    }
    const id = typeof message.id === 'string' || typeof message.id === 'number' ? String(message.id) : undefined;
    switch (message.type) {
      case 'connection_init':
        return this.init(message.payload);
      case 'start':
        if (id === undefined) return this.send('error', undefined, { message: 'start needs an id' });
        return this.start(id, (message.payload ?? {}) as OperationPayload);
      case 'stop':
        if (id !== undefined) await this.stop(id);
        return;
      case 'connection_terminate':
        this.socket.close(1000, 'terminated');
        return;
      default:
        return this.send('error', id, { message: `unknown message type ${String(message.type)}` });
    }
  }

  private async init(payload: unknown): Promise<void> {
    if (this.initReceived) return this.send('connection_error', undefined, { message: 'connection_init was sent twice' });
    this.initReceived = true;
    clearTimeout(this.initTimer);
    const credentials = credentialsOf(payload, this.extra.headers, this.extra.ip);
    try {
      await authenticateWs(this.deps.gate, credentials);
    } catch (error) {
      const failure = svcErrorOf(error);
      await this.send('connection_error', undefined, formatError(graphqlErrorOf(failure)));
      this.socket.close(closeCodeOf(failure), closeReasonOf(failure));
      return;
    }
    this.extra.credentials = credentials;
    this.acknowledged = true;
    await this.send('connection_ack');
    await this.send('ka');
    this.socket.keepAlive(() => void this.send('ka'));
  }

  private async start(id: string, payload: OperationPayload): Promise<void> {
    if (!this.acknowledged)
      return this.refuse(id, new SvcError('AUTHENTICATION_REQUIRED', 'send connection_init (and wait for connection_ack) before start', {}));
    if (this.operations.has(id)) return this.refuse(id, new SvcError('VALIDATION_ERROR', `an operation with id ${id} is running`, { id }));
    const max = this.deps.subscriptionsPerConnectionMax;
    if (this.operations.size >= max) {
      return this.refuse(
        id,
        new SvcError('LIMIT_EXCEEDED', `a connection may run ${max} operations at once`, { limit: 'graphqlWsSubscriptionsPerConnectionMax', value: max }),
      );
    }
    this.operations.set(id, null);
    try {
      const args = await prepareOperation(this.deps, this.extra.credentials!, payload);
      if (!this.operations.has(id)) return;
      if (Array.isArray(args)) {
        await this.send('data', id, { data: null, errors: args.map((e) => formatError(e, this.deps.onInternalError)) });
      } else {
        await this.run(id, await runOperation(args as Parameters<typeof runOperation>[0]));
      }
      if (this.operations.has(id)) await this.send('complete', id);
    } finally {
      this.operations.delete(id);
    }
  }

  private async run(id: string, result: AsyncIterableIterator<ExecutionResult> | ExecutionResult): Promise<void> {
    if (!(Symbol.asyncIterator in result)) return this.send('data', id, formatResult(result, this.deps.onInternalError));
    if (!this.operations.has(id)) {
      await result.return?.();
      return;
    }
    this.operations.set(id, result);
    try {
      for await (const next of result) {
        if (!this.operations.has(id)) break;
        await this.send('data', id, formatResult(next, this.deps.onInternalError));
      }
    } catch (error) {
      if (this.operations.has(id)) await this.send('error', id, formatError(graphqlErrorOf(svcErrorOf(error)), this.deps.onInternalError));
      this.operations.delete(id);
    }
  }

  private async stop(id: string): Promise<void> {
    const running = this.operations.get(id);
    if (running === undefined) return;
    this.operations.delete(id);
    await running?.return?.();
    await this.send('complete', id);
  }

  private refuse(id: string, error: SvcError): Promise<void> {
    return this.send('error', id, formatError(graphqlErrorOf(error)));
  }
}
