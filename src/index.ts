export type { EvalClient, RedisClient, ScriptArgument } from "./client/redis-client";
export { Debounce } from "./debounce";
export {
  type AcquisitionFailureReason,
  type InstanceFailure,
  isLockError,
  LockAcquisitionError,
  LockError,
  type LockErrorCode,
  type LockLossReason,
  LockLostError,
  type LockOperation,
  LockRedisError,
} from "./errors";
export { Lock } from "./lock";
export type {
  AutoExtendConfig,
  DebounceConfig,
  LockAcquireConfig,
  LockConfig,
  LockCreateConfig,
  LockStatus,
  RetryConfig,
} from "./types";
