// #region readme
import { Lock } from "@upstash/lock";
import { Cluster } from "ioredis";

export async function nightlyReport(nodes: { host: string; port: number }[]): Promise<string> {
  const redis = new Cluster(nodes); // node-redis's createCluster() works the same way
  try {
    // Any id works, braces included: the lock's extra keys always share the id's hash slot.
    return await new Lock({ id: "report:{2026}", redis, prefix: "locks:" }).runExclusive(
      () => "report written",
    );
  } finally {
    redis.disconnect();
  }
}
// #endregion
