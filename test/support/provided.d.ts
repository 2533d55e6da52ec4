export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the Upstash-compatible REST endpoint the suite talks to. */
    upstashUrl: string;
    /** Bearer token for `upstashUrl`. */
    upstashToken: string;
    /** `redis://` URL of the throwaway redis-server behind the proxy, or "" when the suite runs against an external server. */
    redisUrl: string;
  }
}
