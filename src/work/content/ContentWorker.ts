import { Effect } from "effect"
import { answerJobs } from "../../platform/WorkerPool.ts"
import { type ContentJob, runContentJob } from "./ContentJobs.ts"

/** The body of a content worker thread (see `ContentPool`). */
answerJobs((job: ContentJob) => Effect.sync(() => runContentJob(job)))
