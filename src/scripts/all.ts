import { takeIfFreeOrOwned, takeWithClockFence, takeWithCountedFence } from "./acquire";
import { countCall, isLatestCall } from "./debounce";
import { addLeaseIfOwned } from "./extend";
import {
  addLeaseToPermit,
  checkPermit,
  leaveQueue,
  releasePermit,
  renewPermit,
  takePermit,
  takePermitWithClockFence,
  takePermitWithCountedFence,
} from "./permits";
import { deleteIfOwned } from "./release";
import { renewIfOwned } from "./renew";
import { checkOwner } from "./status";

/** Every script the library sends, for the tests that check their SHA-1 literals and their keys. */
export const allScripts = [
  takeIfFreeOrOwned,
  takeWithCountedFence,
  takeWithClockFence,
  deleteIfOwned,
  addLeaseIfOwned,
  renewIfOwned,
  checkOwner,
  countCall,
  isLatestCall,
  takePermit,
  takePermitWithCountedFence,
  takePermitWithClockFence,
  releasePermit,
  addLeaseToPermit,
  checkPermit,
  renewPermit,
  leaveQueue,
];
