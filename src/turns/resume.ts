// A turn cut off by a database outage is resumed once, by itself. The turn
// read or wrote PostgreSQL while it was restarting, so it ended `failed`
// with the driver's error; without this, the agent would never react to
// the results it was carrying (their notes are stored, and replayed, but no
// turn would run until the operator typed something).
//
// Invariant: one resume per cut-off turn, never a resume of a resume (a
// long outage cannot make turns chase each other); the resume is an
// ordinary continuation turn with a note saying what happened, so it runs
// under the same gates (approvals, the assent window) as any other.
import { isDbUnavailable } from "../db/pg-errors.js";

/** turns.input.reason of a resume turn. */
export const RESUME_REASON = "resume_after_database_outage";

/** Whether a turn that failed with `err` should be resumed. */
export function shouldResume(p: { err: unknown; aborted: boolean; reason: string | undefined }): boolean {
  return !p.aborted && p.reason !== RESUME_REASON && isDbUnavailable(p.err);
}

/** The note the resume turn carries to the model. */
export function resumeNote(error: string): string {
  return `Your previous turn was cut off because the database became unavailable (${error}). What it stored is above; anything it was doing when it stopped may not have been recorded. Carry on from where it stopped.`;
}
