import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Consumer, installBuiltPackage, repoRoot } from "./support/built-package";

// The declarations as a TypeScript user receives them (from the packed tarball), compiled by the oldest
// TypeScript we support, with `lib` ES2022 only, no @types/node and skipLibCheck off, so every line of the
// .d.ts files is checked. TypeScript 5.2 is the floor: the declarations reference the `esnext.disposable` lib
// (for `AsyncDisposable` and `await using`), which 5.0 and 5.1 do not have.
// It is the dependency of a nested package (test/runtimes/oldest-typescript), so that its `tsc` does not take
// the place of the project's own in node_modules/.bin, as an npm alias would.
const manifest = createRequire(join(repoRoot, "node_modules/oldest-typescript/package.json")).resolve(
  "typescript/package.json",
);
const tsc = join(dirname(manifest), "bin/tsc");
const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
const run = promisify(execFile);

/** Uses every kind of export: classes, errors, type-only names, options, fencing, leases and `await using`. */
const CONSUMER = `import {
  Debounce,
  enableWakeUps,
  FairLock,
  isLockError,
  type Lease,
  Lock,
  LockAcquisitionError,
  type LockCreateConfig,
  type LockStatus,
  quorum,
  Semaphore,
} from "@upstash/lock";

const redis = { eval: async (_script: string, _keys: string[], _args: (string | number)[]): Promise<unknown> => 1 };
const options: LockCreateConfig = { id: "x", redis, lease: 1000, retry: { attempts: 1, delay: 5 }, autoExtend: true };

export async function status(): Promise<LockStatus | "busy"> {
  try {
    await using lock = await new Lock(options).acquireOrThrow({ fencing: true, timeout: 500 });
    if (lock.remainingMs <= 0) return "FREE";
    const token: number | undefined = lock.fencingToken;
    return token === undefined ? "FREE" : lock.getStatus();
  } catch (error) {
    if (error instanceof LockAcquisitionError && isLockError(error)) return "busy";
    throw error;
  }
}

// No AbortSignal members: without the DOM lib or @types/node, a consumer has no AbortSignal type of its own.
export const signalOf = (lock: Lock) => lock.signal;
export const debounce = new Debounce({ id: "d", redis, wait: 10, callback: (n: number) => n * 2 });

// The API of the rewrite: fair locks, quorums, opt-in wake-ups, and a Lease per permit.
export const inLine = new FairLock(options);
export const twoOfThree = new Lock({ id: "q", redis: quorum([redis, { ...redis }, { ...redis }]) });
export const wakeUps = () => enableWakeUps(redis);
const semaphore = new Semaphore({ id: "s", redis, limit: 2, fair: true });
export async function permitFor(): Promise<number | undefined> {
  const lease: Lease | undefined = await semaphore.acquire({ timeout: 100 });
  if (lease === undefined) return undefined;
  await using held = lease;
  return held.fencingToken ?? held.remainingMs;
}
export const exclusive = () => semaphore.runExclusive(async (_signal, lease: Lease) => lease.getStatus());
export const releaseElsewhere = (uuid: string): Promise<boolean> => semaphore.permit(uuid).release();
`;

/**
 * Code written against 0.2.1's declarations (its README's examples, and its exported types read as 0.2 declared
 * them). What 0.2 code may still fail on is listed in docs/differences-from-0.2.md ("Types").
 */
const CONSUMER_02 = `import { Debounce, Lock, type DebounceConfig, type LockAcquireConfig, type LockConfig, type LockCreateConfig, type LockStatus, type RetryConfig } from "@upstash/lock";
import { Redis } from "@upstash/redis";

const redis = new Redis({ url: "http://localhost", token: "t" });

export async function handleOperation(critical: () => Promise<void>) {
  const lock = new Lock({ id: "unique-lock-id", redis });
  if (await lock.acquire()) {
    await critical();
    await lock.release();
  }
}

declare function doExpensiveWork(arg: string): void;
const debounced = new Debounce({ id: "unique-function-id", redis, wait: 1000, callback: (arg) => doExpensiveWork(arg) });
export const trigger = (arg: string) => debounced.call(arg);

export const describeRetry = (retry: RetryConfig): number => retry.attempts * retry.delay;
export const leaseOf = (config: LockConfig): number => config.lease + config.retry.attempts;
export const typed: DebounceConfig = { redis, id: "d", wait: 1000, callback: (arg: string) => arg.length };
export const acquireConfig: LockAcquireConfig = { lease: 1000, retry: { attempts: 3, delay: 100 }, uuid: "u" };
export const createConfig: LockCreateConfig = { id: "x", redis, lease: 1000, retry: { attempts: 3, delay: 100 } };
export async function methods(lock: Lock): Promise<[boolean, boolean, boolean, LockStatus, string]> {
  return [await lock.acquire(acquireConfig), await lock.extend(100), await lock.release(), await lock.getStatus(), lock.id];
}
export class MyLock extends Lock {
  override async acquire(config?: LockAcquireConfig): Promise<boolean> {
    return super.acquire(config);
  }
}
`;

let consumer: Consumer;

beforeAll(async () => {
  consumer = await installBuiltPackage();
  writeFileSync(join(consumer.dir, "consumer.ts"), CONSUMER);
  // The same code as a CommonJS module, so `require` resolution reaches dist/index.d.cts.
  writeFileSync(join(consumer.dir, "consumer-cjs.cts"), CONSUMER);
  writeFileSync(join(consumer.dir, "consumer-0.2.ts"), CONSUMER_02);
});

afterAll(() => consumer?.remove());

/** Runs the oldest tsc on `files` of the consumer with `compilerOptions`: its errors, or "" when none. */
async function typeCheck(name: string, compilerOptions: object, files: string[]): Promise<string> {
  const project = join(consumer.dir, name);
  writeFileSync(project, JSON.stringify({ compilerOptions, files }));
  return run(process.execPath, [tsc, "-p", project], { cwd: consumer.dir }).then(
    () => "",
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  );
}

describe(`TypeScript ${version} (the oldest supported), lib ES2022 only, no @types/node`, () => {
  it.each([
    ["nodenext (ESM and CommonJS)", "nodenext", "nodenext", ["consumer.ts", "consumer-cjs.cts"]],
    ["bundler", "esnext", "bundler", ["consumer.ts"]],
    ["node10 (CommonJS, no exports map)", "commonjs", "node10", ["consumer.ts"]],
  ])(
    "the declarations and a consumer type-check under %s resolution",
    async (_name, module, moduleResolution, files) => {
      const compilerOptions = {
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        lib: ["es2022"],
        types: [],
        target: "es2022",
        module,
        moduleResolution,
      };
      expect(await typeCheck(`tsconfig.${moduleResolution}.json`, compilerOptions, files)).toBe("");
    },
  );

  it("code written for 0.2.1's declarations compiles (with @upstash/redis, whose own declarations need the DOM lib)", async () => {
    const compilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true, // @upstash/redis's; ours are checked whole above
      lib: ["es2022", "dom"],
      types: [],
      target: "es2022",
      module: "esnext",
      moduleResolution: "bundler",
    };
    expect(await typeCheck("tsconfig.0.2.json", compilerOptions, ["consumer-0.2.ts"])).toBe("");
  });
});
