// Every export is its own module's: a bundler keeps only what you import (`sideEffects: false`).
export { Debounce } from "./debounce";
export {
  type AcquisitionFailureReason,
  type InstanceFailure,
  InstanceTimeoutError,
  isLockError,
  LockAcquisitionError,
  LockError,
  type LockErrorCode,
  type LockLossReason,
  LockLostError,
  type LockOperation,
  LockRedisError,
} from "./errors";
export { FairLock } from "./fair-lock";
export { Lease } from "./lease";
export { Lock } from "./lock";
export type { QuorumSpec } from "./options";
export { quorum } from "./quorum";
export type { EvalClient, IoRedisClient, NodeRedisClient, RedisClient, ScriptArgument } from "./redis/client";
export { Semaphore } from "./semaphore";
export type {
  AutoExtendConfig,
  DebounceConfig,
  FencingConfig,
  HoldOptions,
  LockAcquireConfig,
  LockConfig,
  LockCreateConfig,
  LockStatus,
  RetryConfig,
  SemaphoreCreateConfig,
} from "./types";
export { enableWakeUps } from "./wake/enable";
