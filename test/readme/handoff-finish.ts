// The README's background worker, run as its own process: finishes the job whose lock the test
// process took with examples/handoff.ts's startJob().
import { finishJob } from "../../examples/handoff";

const uuid = process.env.LOCK_UUID;
if (!uuid) throw new Error("handoff-finish needs LOCK_UUID");
process.stdout.write(`${JSON.stringify({ released: await finishJob(uuid) })}\n`);
