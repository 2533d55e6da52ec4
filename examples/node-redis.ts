// #region readme
import { Lock } from "@upstash/lock";
import { createClient } from "redis";

export async function nightlyReport(redisUrl: string): Promise<string> {
  const redis = await createClient({ url: redisUrl }).connect(); // connected, then passed as is
  try {
    return await new Lock({ id: "nightly-report", redis }).runExclusive(() => "report written");
  } finally {
    await redis.close();
  }
}
// #endregion
