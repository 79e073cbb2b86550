import type { FastifyReply } from 'fastify';

/**
 * Runs `work` with a signal that aborts when the client goes away before the response is
 * finished, so the query behind a request stops with it. The listener is removed afterwards.
 */
export async function untilClientLeaves<T>(reply: FastifyReply, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const onClose = (): void => {
    // HTTP/2: a stream the client reset reports its response finished, though nothing ended it.
    const raw = reply.raw as { writableFinished: boolean; writableEnded: boolean; stream?: { destroyed: boolean } };
    if (!raw.writableFinished || (raw.stream?.destroyed === true && !raw.writableEnded)) abort.abort();
  };
  reply.raw.once('close', onClose);
  try {
    return await work(abort.signal);
  } finally {
    reply.raw.off('close', onClose);
  }
}
