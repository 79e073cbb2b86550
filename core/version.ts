/** The service version reported by /health, /info and the detailed health body. */
export const SVC_VERSION = '7.0.0';
