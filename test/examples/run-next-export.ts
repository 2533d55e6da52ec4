// The worker side of examples/request-to-job.ts, run as its own process: takes the next export job from the
// queue and finishes it under the lock the request handler took.
import { runNextExport } from "../../examples/request-to-job";

process.stdout.write(`${JSON.stringify({ outcome: await runNextExport() })}\n`);
