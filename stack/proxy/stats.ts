/** Counters of a running proxy, read in-process by tests and benchmarks. */
export interface ProxyStats {
  /** HTTP requests received, whatever their outcome. */
  requests: number;
  /** Request body bytes read (bodies of requests rejected before reading, e.g. on a 401, are not read). */
  requestBytes: number;
  /** Redis commands forwarded (a transaction's MULTI and EXEC not included). */
  commands: number;
  /** Server-sent-events streams opened on `/subscribe/...` or `/psubscribe/...` (each one a SUBSCRIBE). */
  subscriptions: number;
}

/** Zeroed counters. */
export function createStats(): ProxyStats {
  return { requests: 0, requestBytes: 0, commands: 0, subscriptions: 0 };
}
