import type { Server } from 'node:net';

/** Open connections of a listener against its cap (node's `server.maxConnections`; unset = no cap). */
export interface ConnectionGauge {
  count(): Promise<number>;
  /** null when the listener has no cap. */
  max(): number | null;
}

export function connectionGauge(server: Server): ConnectionGauge {
  return {
    count: () =>
      new Promise((resolve, reject) => {
        server.getConnections((error, count) => (error ? reject(error) : resolve(count)));
      }),
    max: () => (Number.isFinite(server.maxConnections) && server.maxConnections > 0 ? server.maxConnections : null),
  };
}

/** True while another connection can be accepted. */
export async function connectionsAvailable(gauge: ConnectionGauge): Promise<boolean> {
  const max = gauge.max();
  return max === null || (await gauge.count()) < max;
}
