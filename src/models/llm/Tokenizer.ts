import { Effect, Layer } from "effect"
import { makeWorkerPool, siblingModule, type WorkerFailed } from "../../platform/WorkerPool.ts"
import type { ContentPart, LlmRequest, TokenUsage } from "./Llm.ts"

/**
 * Token counting with a real BPE tokenizer (`o200k_base`, bundled with
 * `gpt-tokenizer`; nothing is downloaded). Providers' own tokenizers differ,
 * so for other vendors' models the count is a close estimate, not their bill.
 * The service loads the encoding at start-up (`TokenizerThreads`, 0.2–0.9 s),
 * before it answers, so that no request pays for it.
 *
 * The cost is linear in the input and never holds the event loop for long:
 * - In the service (`TokenizerThreads`), a text longer than
 *   `offThreadCharacters` is counted on a tokenizer worker thread
 *   (`TokenizerWorker`): the request thread only hands it over.
 * - BPE merges each pre-tokenized piece in time quadratic in its length, and
 *   a run of letters (a long word, a sentence of Chinese) or of spaces is one
 *   piece. Runs longer than `longestRun` are counted in slices of that length,
 *   which adds at most one token per slice to the count.
 * - Counting yields to the event loop once it has run for `turnBudgetMs` in
 *   one turn (all counts together), so other requests are served while many
 *   small texts are counted (`npm run bench:stall`).
 *   A budget of time rather than of characters holds however slow the text
 *   is to count and however busy the machine is.
 * This is the one tokenizer of the service: every feature counts through it.
 */

type Encoding = typeof import("gpt-tokenizer/encoding/o200k_base")

/** Text that merely looks like a special token is counted as text, never rejected. */
const asPlainText = { disallowedSpecial: new Set<string>() }

/** Tokens an image is counted as: about what a ~1 megapixel image costs at Anthropic and OpenAI. */
export const imageTokens = 1_600

/** Framing tokens per message (role and separators), as OpenAI's chat format counts them. */
const perMessage = 3

/** The longest run of non-space (or of space) characters handed to BPE as one piece. */
export const longestRun = 128

/** The most characters handed to the tokenizer at once (about a millisecond of work). */
const charactersPerPiece = 8_192

/**
 * Texts longer than this are counted on a worker thread. Below it a count is
 * at most ~16–25 ms of CPU, still in 5 ms slices (random letters, BPE's worst
 * case, take 1–1.5 ms per 1,000 characters; prose far less), and most texts
 * this short cost less to count than to hand over (5–7 ms of this thread's CPU
 * for a 300,000-character text, 30 ms when the thread must start).
 */
export const offThreadCharacters = 16_384

/** Tokenizer worker threads at most; further large counts wait their turn. */
const tokenizerWorkers = 2
/** Each tokenizer thread's heap limit: the encoding takes about 60 MB, a 1 MB text a few more. */
const tokenizerWorkerMemoryMb = 256
/** A count's time limit on a thread: the largest body (`MAX_BODY_BYTES`) takes a few seconds. */
const tokenizerJobTimeoutMs = 60_000

/** How long counting may hold the event loop in one turn before it yields. */
const turnBudgetMs = 5

/**
 * Entries of the library's merge cache. Its default (100,000) makes it evict
 * from the front of a huge `Map`, which V8 does in time growing with the
 * holes left behind: counting unseen text got ~6 times slower once it filled.
 */
const mergeCacheEntries = 4_096

const runs = /\s+|\S+/gu

/** `run` cut into slices of at most `longestRun` characters, never inside a surrogate pair. */
const slicesOf = function*(run: string) {
  let from = 0
  while (from < run.length) {
    let to = Math.min(from + longestRun, run.length)
    const last = run.charCodeAt(to - 1)
    if (to < run.length && last >= 0xd800 && last <= 0xdbff) to -= 1
    yield run.slice(from, to)
    from = to
  }
}

/**
 * `text` as consecutive pieces of at most about `charactersPerPiece` characters
 * and with no run longer than `longestRun`. Pieces are cut before the space
 * that starts a word, where the tokenizer cuts too, so for ordinary text the
 * pieces' counts add up to the count of the whole.
 */
export const piecesOf = function*(text: string) {
  let from = 0
  for (const match of text.matchAll(runs)) {
    const run = match[0]
    const at = match.index
    if (run.length > longestRun) {
      if (at > from) yield text.slice(from, at)
      yield* slicesOf(run)
      from = at + run.length
    } else if (at + run.length - from > charactersPerPiece) {
      // Before the space that precedes a word no pre-token spans the cut; text without one is cut anyway.
      const beforeSpace = at - 1 > from && text.charCodeAt(at - 1) === 0x20
      if (beforeSpace || at + run.length - from > 2 * charactersPerPiece) {
        const cut = beforeSpace ? at - 1 : at
        yield text.slice(from, cut)
        from = cut
      }
    }
  }
  if (from < text.length) yield text.slice(from)
}

export interface TokenCounter {
  readonly text: (text: string) => Effect.Effect<number>
  /** Every input token of a request: system prompt, messages and tool definitions. */
  readonly request: (request: LlmRequest) => Effect.Effect<number>
  /** Usage estimated for a provider that reported none: the request in, `generated` text out. */
  readonly estimate: (request: LlmRequest, generated: string) => Effect.Effect<TokenUsage>
  /** The longest prefix of `text` made of whole words (each with its leading spaces) within `limit` tokens. */
  readonly wordsWithin: (text: string, limit: number) => Effect.Effect<string>
}

const makeCounter = (encoder: Encoding): TokenCounter => {
  encoder.setMergeCacheSize(mergeCacheEntries)
  /**
   * When counting began in this turn of the event loop; shared, as all counts
   * run on the one loop. It is forgotten by an immediate queued when the turn
   * began, which runs before the scheduler resumes the counts that yielded.
   */
  let turnStartedAt: number | undefined
  const countPiece = (piece: string) =>
    Effect.suspend(() => {
      if (turnStartedAt === undefined) {
        turnStartedAt = performance.now()
        setImmediate(() => (turnStartedAt = undefined))
      }
      const tokens = encoder.countTokens(piece, asPlainText)
      return performance.now() - turnStartedAt < turnBudgetMs ? Effect.succeed(tokens) : Effect.as(Effect.yieldNow, tokens)
    })
  const countHere = Effect.fnUntraced(function*(value: string) {
    let total = 0
    for (const piece of piecesOf(value)) total += yield* countPiece(piece)
    return total
  })
  // A thread that fails or overruns its time is replaced; the text is then counted here, in slices.
  const text = (value: string) =>
    offThread !== undefined && value.length > offThreadCharacters
      ? Effect.catch(offThread(value), () => countHere(value))
      : countHere(value)
  const part = (content: ContentPart): Effect.Effect<number> => {
    switch (content.type) {
      case "text":
        return text(content.text)
      case "image":
        return Effect.succeed(imageTokens)
      case "tool_call":
        return Effect.zipWith(text(content.name), text(JSON.stringify(content.input ?? {})), (a, b) => a + b)
      case "tool_result":
        return sum(content.content, part)
    }
  }
  const sum: <A>(items: ReadonlyArray<A>, count: (item: A) => Effect.Effect<number>) => Effect.Effect<number> =
    Effect.fnUntraced(function*<A>(items: ReadonlyArray<A>, count: (item: A) => Effect.Effect<number>) {
      let total = 0
      for (const item of items) total += yield* count(item)
      return total
    })
  const request = Effect.fnUntraced(function*(input: LlmRequest) {
    let total = input.system === undefined ? 0 : (yield* text(input.system)) + perMessage
    for (const message of input.messages) total += perMessage + (yield* sum(message.content, part))
    for (const tool of input.tools ?? []) {
      total += (yield* text(tool.name)) + (yield* text(tool.description ?? "")) +
        (yield* text(JSON.stringify(tool.inputSchema)))
    }
    return total
  })
  const wordsWithin = Effect.fnUntraced(function*(value: string, limit: number) {
    let kept = 0
    let tokens = 0
    for (const match of value.matchAll(/\s*\S+/gu)) {
      tokens += yield* text(match[0])
      if (tokens > limit) break
      kept = match.index + match[0].length
    }
    return value.slice(0, kept)
  })
  return {
    text,
    request,
    estimate: (input, generated) =>
      Effect.zipWith(request(input), text(generated), (inputTokens, outputTokens) => ({
        inputTokens,
        outputTokens,
        cachedTokens: 0
      })),
    wordsWithin
  }
}

/** Where large texts are counted while `TokenizerThreads` is up; on this thread otherwise (and in its workers). */
let offThread: ((text: string) => Effect.Effect<number, WorkerFailed>) | undefined

let counter: Promise<TokenCounter> | undefined

/** The tokenizer, loaded once per process. */
export const tokenCounter: Effect.Effect<TokenCounter> = Effect.promise(() =>
  counter ??= import("gpt-tokenizer/encoding/o200k_base").then(makeCounter)
)

/**
 * The service's tokenizer: the encoding loaded now (at start-up), so that no
 * request waits for it, and worker threads (started on the first large count)
 * for large texts while the layer is up.
 */
export const TokenizerThreads = Layer.effectDiscard(Effect.gen(function*() {
  yield* tokenCounter
  const count = yield* makeWorkerPool<string, number>({
    file: siblingModule(import.meta.url, "TokenizerWorker"),
    workers: tokenizerWorkers,
    memoryMb: tokenizerWorkerMemoryMb,
    timeoutMs: tokenizerJobTimeoutMs
  })
  yield* Effect.acquireRelease(
    Effect.sync(() => void (offThread = count)),
    () => Effect.sync(() => void (offThread === count && (offThread = undefined)))
  )
}))
