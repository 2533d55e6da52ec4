export type { EvalClient, RedisClient, ScriptArgument } from "./client/types";
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
export type { LeaseHolder } from "./lease-holder";
export { Lock } from "./lock";
export { Semaphore } from "./semaphore";
export type {
  AutoExtendConfig,
  DebounceConfig,
  FencingConfig,
  LockAcquireConfig,
  LockConfig,
  LockCreateConfig,
  LockStatus,
  RetryConfig,
  SemaphoreCreateConfig,
} from "./types";
