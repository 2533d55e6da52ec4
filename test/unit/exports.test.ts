import { afterEach, describe, expect, it, vi } from "vitest";
// Every type name 0.2 exported must still resolve for existing imports (checked by the typecheck).
import type {
  DebounceConfig,
  LockAcquireConfig,
  LockConfig,
  LockCreateConfig,
  LockStatus,
  RetryConfig,
} from "../../src/index";
import * as library from "../../src/index";

describe("exports", () => {
  it("exposes the runtime values users import", () => {
    expect(Object.keys(library).sort()).toEqual(
      [
        "Debounce",
        "FairLock",
        "InstanceTimeoutError",
        "Lease",
        "Lock",
        "LockAcquisitionError",
        "LockError",
        "LockLostError",
        "LockRedisError",
        "Semaphore",
        "enableWakeUps",
        "isLockError",
        "quorum",
      ].sort(),
    );
  });

  it("keeps 0.2's type names usable", () => {
    const retry: RetryConfig = { attempts: 1, delay: 1 };
    const acquire: LockAcquireConfig = { lease: 1, retry, uuid: "u" };
    const status: LockStatus = "FREE";
    const create = { id: "i", redis: { eval: async () => 1 } } satisfies LockCreateConfig;
    const debounce = { ...create, wait: 1, callback: () => {} } satisfies DebounceConfig;
    const legacy: LockConfig = { ...create, lease: 1, UUID: null, retry: { attempts: 1, delay: 1 } };
    expect([acquire.retry, status, debounce.wait, legacy.UUID]).toEqual([retry, "FREE", 1, null]);
  });
});

describe("without Web Crypto", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("acquire without a uuid explains what is missing, before any request", async () => {
    vi.stubGlobal("crypto", undefined);
    const client = { eval: vi.fn(async () => [1]) };
    const lock = new library.Lock({ id: "no-crypto", redis: client });
    await expect(lock.acquire()).rejects.toThrow(/crypto\.randomUUID\(\)/);
    expect(client.eval).not.toHaveBeenCalled();
    // A caller-supplied uuid needs no Web Crypto to acquire.
    await expect(lock.acquire({ uuid: "given" })).resolves.toBe(true);
  });
});

describe("isLockError", () => {
  it("recognises library errors by instance and by shape, and nothing else", () => {
    const error = new library.LockAcquisitionError("id", { attempts: 1, elapsedMs: 1, reason: "held" });
    expect(library.isLockError(error)).toBe(true);
    // A copy from the package's other build (ESM next to CJS) has its own classes: matched by shape.
    const lookalike = Object.assign(new Error("x"), {
      name: "LockAcquisitionError",
      code: "LOCK_NOT_ACQUIRED",
      lockId: "id",
    });
    expect(library.isLockError(lookalike)).toBe(true);
    expect(library.isLockError(new library.InstanceTimeoutError("id", "acquire", 200))).toBe(true);
    expect(library.isLockError(new Error("x"))).toBe(false);
    expect(library.isLockError(new TypeError("x"))).toBe(false);
    // Other libraries' errors that merely look alike are not the lock's.
    const unknownCode = Object.assign(new Error("x"), {
      name: "LockTimeout",
      code: "ETIMEDOUT",
      lockId: "id",
    });
    expect(library.isLockError(unknownCode)).toBe(false);
    const noLockId = Object.assign(new Error("x"), { name: "LockError", code: "LOCK_LOST" });
    expect(library.isLockError(noLockId)).toBe(false);
  });
});
