// #region readme
import { Lock } from "@upstash/lock";
import { Redis } from "ioredis";

export async function nightlyReport(redisUrl: string): Promise<string> {
  const redis = new Redis(redisUrl); // passed to the lock as is: no adapter, no wrapper
  try {
    return await new Lock({ id: "nightly-report", redis }).runExclusive(() => "report written");
  } finally {
    redis.disconnect();
  }
}
// #endregion
