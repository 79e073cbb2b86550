import type { Principal, Role } from './principal.js';

/** What a verified credential grants, before the request picks its tenant. */
export interface Credential {
  /** Which kind of credential: rate limits count each kind's subjects apart. */
  readonly kind: 'admin_key' | 'api_key' | 'jwt';
  /** `admin` for the admin key, the key id of an API key, the sub claim of a JWT. */
  readonly subject: string;
  readonly role: Role;
  /** The tenant it is bound to; null: unbound (its tenant is `default`, and an admin may choose any). */
  readonly tenant: string | null;
  /** Its own requests per rate-limit window; null: the server's rateLimitRequestsMax. */
  readonly rateLimitRequestsMax: number | null;
}

/** Verifies a presented credential; throws SvcError AUTHENTICATION_FAILED (or AUTHORIZATION_DENIED). */
export interface Authenticator {
  authenticate(presented: string, nowMs: number): Promise<Credential>;
  /**
   * What authenticate() would resolve to, when that is known without waiting: a key verified
   * before whose key file needs no look now. undefined: call authenticate() (a JWT, a new or
   * wrong key, a key-file check due).
   */
  remembered?(presented: string, nowMs: number): Credential | undefined;
}

/** The principal of a verified credential in the tenant the request picked. */
export function principalFor(credential: Credential, tenant: string): Principal {
  return { subject: credential.subject, credential: `${credential.kind}:${credential.subject}`, role: credential.role, tenant };
}
