/** The REST interface's root; every resource plugin is registered under it. */
export const API_PREFIX = '/api/v1';
