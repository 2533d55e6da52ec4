// #region readme
import { Lock, quorum } from "@upstash/lock";
import { Redis } from "ioredis";

export async function nightlyReport(independentRedisUrls: [string, string, string]): Promise<string> {
  const instances = independentRedisUrls.map((url) => new Redis(url)); // 3 servers, no replication between them
  try {
    const lock = new Lock({
      id: "nightly-report",
      redis: quorum(instances),
      lease: 30_000,
      autoExtend: true,
    });
    return await lock.runExclusive(() => "report written"); // held while a majority (2 of 3) holds it
  } finally {
    for (const redis of instances) redis.disconnect();
  }
}
// #endregion
