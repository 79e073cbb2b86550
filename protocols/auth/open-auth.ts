import type { Logger } from '../../core/logger.js';
import type { AdminKey } from './admin-key.js';
import type { AuthGate } from './authenticate.js';
import { createAuthenticator } from './authenticator.js';
import { createJwtVerifier, type JwtSettings } from './jwt.js';
import { ApiKeyRegistry } from './key-registry.js';
import { AUTH_LIMITS } from './limits.js';
import { FixedWindowRateLimiter } from './rate-limit.js';

/** The auth settings of core/settings.ts (a Config satisfies it). */
export interface AuthSettings extends JwtSettings {
  readonly rateLimitRequestsMax: number;
  readonly rateLimitWindowMs: number;
}

export interface OpenAuthOptions {
  /** The data directory's root: the API key file lives there. */
  readonly dataDir: string;
  readonly adminKey: AdminKey;
  readonly settings: AuthSettings;
  readonly logger: Logger;
}

/** The gate withAuth() puts in front of every /api/v1 resource plugin. Bad settings fail here, at start. */
export async function openAuth(options: OpenAuthOptions): Promise<AuthGate> {
  const { settings } = options;
  const apiKeys = await ApiKeyRegistry.open({ dataDir: options.dataDir, checkIntervalMs: AUTH_LIMITS.keyFileCheckIntervalMs, logger: options.logger });
  const jwt = await createJwtVerifier(settings, options.logger);
  return {
    authenticator: createAuthenticator({ adminKey: options.adminKey, apiKeys, jwt }),
    limiter: new FixedWindowRateLimiter({ windowMs: settings.rateLimitWindowMs, countersMax: AUTH_LIMITS.rateLimitCountersMax }),
    rateLimitRequestsMax: settings.rateLimitRequestsMax,
    rateLimitWindowMs: settings.rateLimitWindowMs,
  };
}
