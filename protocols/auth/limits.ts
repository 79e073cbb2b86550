/** The limits of protocols/auth in one place (the settings of core/settings.ts aside). */
export const AUTH_LIMITS = Object.freeze({
  /** How often the server looks at the API key file: a created or revoked key counts within this. */
  keyFileCheckIntervalMs: 1000,
  /** Keys (active and revoked) one data directory may hold. */
  apiKeysMax: 10_000,
  /** Largest API key file read (10,000 keys are about 3 MiB). */
  keyFileBytesMax: 16 * 1024 * 1024,
  /** How long a `svcdb keys` command waits for another one to finish with the key file. */
  keyFileLockWaitMs: 5000,
  /** A lock file older than this was left by a command that died: it is taken over. */
  keyFileLockStaleMs: 30_000,
  /** Longest key name. */
  keyNameCharsMax: 100,
  /**
   * Verified admin and API keys remembered by the authenticator (presented value -> credential), so
   * a key is hashed once rather than on every request; past it the oldest is forgotten.
   */
  credentialCacheEntriesMax: 10_000,
  /** Rate-limit counters held at once (credentials and addresses seen in the current window). */
  rateLimitCountersMax: 100_000,
  /** Clock skew allowed on a JWT's exp and nbf (PostgREST allows 30 s too). */
  jwtClockToleranceSeconds: 30,
  /** Longest credential looked at; longer ones fail without being parsed. */
  credentialCharsMax: 16 * 1024,
  /** Longest JWT sub claim. */
  jwtSubjectCharsMax: 256,
  /** Time limit of one fetch of an OpenID provider's JWKS (jose's default too). */
  jwksFetchTimeoutMs: 5000,
  /** Largest JWKS document read (providers publish a few keys: a few KiB). */
  jwksBytesMax: 1024 * 1024,
  /** Most keys a JWKS may hold. */
  jwksKeysMax: 100,
});
