// `npm run demo:web [-- --port N]`: starts a redis-server, the local Upstash REST proxy and the
// page's server, prints the page's URL, and serves until SIGINT or SIGTERM; then it stops all three
// and exits 0.

import { interrupted, runCli, UsageError } from "../support/cli";
import { integerIn } from "../support/options";
import { startWebDemo } from "./server";

const USAGE = "usage: npm run demo:web [-- --port N]   (N: the page's port; default a free one)";

function parse(argv: string[]): { port: number } | "help" {
  if (argv.includes("--help") || argv.includes("-h")) return "help";
  const [flag, value, ...rest] = argv;
  if (flag === undefined) return { port: 0 };
  if (flag !== "--port" || rest.length > 0) throw new UsageError(`unexpected arguments: ${argv.join(" ")}`);
  return { port: integerIn("port", value ?? "", 0, [0, 65_535]) };
}

runCli({
  name: "demo:web",
  usage: USAGE,
  parse,
  async run(options, cleanups) {
    process.stderr.write("demo:web: starting a redis-server and the local Upstash REST proxy...\n");
    const demo = await startWebDemo(options);
    cleanups.push(async () => {
      await demo.stop();
      process.stderr.write("demo:web: stopped the page, the proxy and the redis-server.\n");
    });
    process.stderr.write(`demo:web: proxy ${demo.stack.url} (redis-server ${demo.stack.redisUrl})\n`);
    process.stdout.write(`Web demo: ${demo.url}  (Ctrl-C to stop)\n`);
    // A signal while it started has aborted already: its listener would never fire.
    if (!interrupted.aborted) {
      await new Promise((resolve) => interrupted.addEventListener("abort", resolve, { once: true }));
    }
    return 0;
  },
});
