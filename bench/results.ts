import type { CommandsResults } from "./commands";
import type { ContentionResults } from "./contention";
import type { MachineInfo } from "./environment";
import type { LatencyResults } from "./latency";
import type { ScaleResults } from "./scale";
import type { SizeResults } from "./size";
import type { WireResults } from "./wire";

/** One goal of the issue, checked against this run. */
export interface GoalResult {
  readonly section: string;
  readonly goal: string;
  readonly target: string;
  readonly measured: string;
  /** undefined: not measured in this run. */
  readonly pass: boolean | undefined;
  /** "PASS, … to spare", "MISS by …", or why it was not measured. */
  readonly verdict: string;
  readonly note?: string;
}

/** Everything one run measured: what its report (latest.md) is made of. */
export interface BenchResults {
  readonly date: string;
  readonly command: string;
  readonly quick: boolean;
  readonly durationSeconds: number;
  readonly machine: MachineInfo & { readonly loadAverageAtEnd: readonly number[] };
  readonly targets: { readonly http: string; readonly tcp: string | undefined };
  readonly notes: string[];
  readonly skipped: { readonly section: string; readonly reason: string }[];
  readonly wire?: WireResults;
  readonly commands?: CommandsResults;
  readonly latency: { http?: LatencyResults; tcp?: LatencyResults };
  readonly contention: { http?: ContentionResults; tcp?: ContentionResults };
  /** Section 7: semaphores, limit 3 (absent in runs from before it existed). */
  readonly permits?: { http?: ContentionResults; tcp?: ContentionResults };
  readonly size?: SizeResults;
  readonly scale?: ScaleResults;
  /** Whether section 8 ran: its table is in handover.md, beside the report. */
  readonly handover: boolean;
  readonly goals: GoalResult[];
}
