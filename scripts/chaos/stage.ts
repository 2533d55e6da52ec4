// The servers of one scenario: per member a private redis-server with the Upstash REST proxy in
// front (stack/local-stack.ts), a raw admin connection to it, and the wires the workers' HTTP
// requests cross: on one Redis, a pass-through per worker with random lossy faults (the soak's
// FaultInjector); on a quorum, one pass-through per member that the schedule delays.

import { Redis as IoRedis } from "ioredis";
import { type LocalStack, startLocalStack } from "../../stack/local-stack";
import type { RedisServerHandle } from "../../stack/redis-server";
import { type PassThrough, startPassThrough } from "../../test/support/pass-through";
import { FaultInjector, type Random } from "../soak/faults";
import { WIRE_LIMITS } from "./faults";
import type { MemberEndpoint } from "./protocol";
import type { Scenario } from "./scenarios";

export interface Member {
  readonly index: number;
  readonly stack: LocalStack;
  readonly server: RedisServerHandle;
  /** A raw connection for the parent: CLIENT KILL, and the key scan at the end. */
  readonly admin: IoRedis;
  /** On an @upstash/redis quorum: the pass-through every worker's requests to this member cross. */
  readonly wire: PassThrough | undefined;
  frozen: boolean;
}

/** One worker's own faulty wire, on one Redis over @upstash/redis. */
export interface Lane {
  readonly passThrough: PassThrough;
  readonly injector: FaultInjector;
}

export interface Stage {
  readonly members: readonly Member[];
  /** Every lane made so far, for the fault counts. */
  readonly lanes: readonly Lane[];
  /** Where a new worker's requests go: its own lane where the scenario has lossy wires. */
  endpointsFor(random: Random): Promise<{ endpoints: MemberEndpoint[]; lane: Lane | undefined }>;
  /** Keys without an expiry on any member, but those `allowed` to have none. */
  keysWithoutExpiry(allowed: (key: string) => boolean): Promise<string[]>;
  /** Thaws and stops everything it started. Safe to call twice. */
  stop(): Promise<void>;
}

async function startMember(index: number, scenario: Scenario): Promise<Member> {
  const stack = await startLocalStack();
  const server = stack.redis as RedisServerHandle;
  const admin = new IoRedis(server.port, "127.0.0.1");
  admin.on("error", () => {});
  const quorumOverHttp = scenario.members > 1 && scenario.client === "upstash";
  const wire = quorumOverHttp ? await startPassThrough({ target: stack.url }) : undefined;
  return { index, stack, server, admin, wire, frozen: false };
}

export async function startStage(scenario: Scenario): Promise<Stage> {
  const members: Member[] = [];
  const lanes: Lane[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      for (const lane of lanes) lane.injector.stop();
      await Promise.all(lanes.map((lane) => lane.passThrough.close()));
      for (const member of members) member.server.thaw();
      await Promise.all(
        members.map(async (member) => {
          member.admin.disconnect();
          await member.wire?.close();
          await member.stack.stop();
        }),
      );
    })();
    return stopping;
  };
  try {
    for (let index = 0; index < scenario.members; index++) members.push(await startMember(index, scenario));
  } catch (error) {
    await stop();
    throw error;
  }
  const endpoint = (member: Member, restUrl: string): MemberEndpoint => ({
    restUrl,
    proxyUrl: member.stack.url,
    token: member.stack.token,
    redisPort: member.server.port,
  });
  return {
    members,
    lanes,
    async endpointsFor(random) {
      if (!scenario.lossyWire) {
        return {
          endpoints: members.map((member) => endpoint(member, member.wire?.url ?? member.stack.url)),
          lane: undefined,
        };
      }
      const member = members[0] as Member;
      const passThrough = await startPassThrough({ target: member.stack.url });
      const lane = { passThrough, injector: new FaultInjector(passThrough, random, WIRE_LIMITS) };
      lanes.push(lane);
      return { endpoints: [endpoint(member, passThrough.url)], lane };
    },
    async keysWithoutExpiry(allowed) {
      const found: string[] = [];
      for (const member of members) {
        for (const key of await member.admin.keys("*")) {
          if ((await member.admin.pttl(key)) === -1 && !allowed(key)) found.push(`#${member.index} ${key}`);
        }
      }
      return found;
    },
    stop,
  };
}
