// Debian's Chromium (`apt-get install chromium`), as the browser tests launch it through
// playwright-core: no browser is ever downloaded.
import type { Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Headless, sandbox off (CI runs as root), and none of the browser's own network chatter. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launches {@link CHROMIUM} with a fresh temporary profile, which closing the browser deletes. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 20_000 });
}
