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
export { Lock } from "./lock";
export type {
  AutoExtendConfig,
  DebounceConfig,
  FencingConfig,
  LockAcquireConfig,
  LockConfig,
  LockCreateConfig,
  LockStatus,
  RetryConfig,
} from "./types";
