/**
 * The server's key registry picks up keys revoked beside it (`svcdb keys revoke`) at its next look
 * at the file, at most checkIntervalMs after the last: time is passed in, so no wall clock decides.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { createApiKey, revokeApiKey } from '../../protocols/auth/api-keys.js';
import { ApiKeyRegistry } from '../../protocols/auth/key-registry.js';
import { tempDir } from '../helpers/stack.js';

describe('ApiKeyRegistry', () => {
  it('sees a revocation at the first lookup checkIntervalMs after its last look, not before', async () => {
    const dir = await tempDir('svcdb-key-registry-');
    try {
      const { key, record } = await createApiKey(dir.dir, { role: 'read_write', tenant: null, name: 'k', rateLimitRequestsMax: null });
      const registry = await ApiKeyRegistry.open({ dataDir: dir.dir, checkIntervalMs: 1000, logger: silentLogger });
      const t0 = Date.now() + 3_600_000; // later than the open's own look, whatever the wall clock does
      expect((await registry.lookup(key, t0))?.revoked_at).toBeNull();
      await revokeApiKey(dir.dir, record.id);
      expect((await registry.lookup(key, t0 + 999))?.revoked_at).toBeNull();
      expect((await registry.lookup(key, t0 + 1000))?.revoked_at).toEqual(expect.any(String));
      expect(await registry.lookup('svc_not-a-key', t0 + 1000)).toBeNull();
    } finally {
      await dir.remove();
    }
  });
});
