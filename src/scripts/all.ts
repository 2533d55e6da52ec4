import { takeIfFreeOrOwned } from "./acquire";
import { countCall, isLatestCall } from "./debounce";
import { addLeaseIfOwned } from "./extend";
import { deleteIfOwned } from "./release";
import { renewIfOwned } from "./renew";
import { checkOwner } from "./status";

/** Every script the library sends, for the test that checks their SHA-1 literals. */
export const allScripts = [
  takeIfFreeOrOwned,
  deleteIfOwned,
  addLeaseIfOwned,
  renewIfOwned,
  checkOwner,
  countCall,
  isLatestCall,
];
