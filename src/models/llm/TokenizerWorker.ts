import { Effect } from "effect"
import { answerJobs } from "../../platform/WorkerPool.ts"
import { tokenCounter } from "./Tokenizer.ts"

/** The body of a tokenizer worker thread: a text's token count (see `offThreadCharacters`). */
answerJobs((text: string) => Effect.flatMap(tokenCounter, (counter) => counter.text(text)))
